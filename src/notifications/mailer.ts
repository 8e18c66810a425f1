/**
 * Email out, behind one small interface with two implementations:
 *
 * - SMTP (`smtp_url` set): nodemailer over `smtp://` or `smtps://`, with short timeouts (connect and
 *   greeting 10 s, socket 30 s) so a dead mail server fails an attempt instead of holding its lease.
 *   Nodemailer's own logger stays off; the URL is logged only through `maskAddress` (no user or password).
 *   Credentials never travel in clear text: when `smtp_url` carries a user or password, the connection
 *   must be TLS — `smtps://`, or STARTTLS required (nodemailer `requireTLS`); a server that offers no
 *   STARTTLS fails the attempt before AUTH is sent (`SmtpTlsRequiredError`, retried like any failure).
 *   `smtp_allow_insecure_auth: true` lifts this (STARTTLS is then used when offered, as before). The
 *   URL is parsed here and the TLS options are set after it, so a query such as `?ignoreTLS=true` or
 *   `?requireTLS=false` cannot weaken the rule.
 * - Outbox (no `smtp_url`): nodemailer's stream transport builds the same RFC 5322 message, which is
 *   written to `<data_dir>/outbox/<date>-<message id>.eml` (temp file + rename, so a file is never
 *   half-written). The name derives from the delivery's stable Message-ID, so a retried delivery
 *   rewrites its own file instead of adding a second one.
 *
 * Every message carries a Message-ID fixed per delivery (`<message id>@switchyard`), so receivers can
 * de-duplicate an at-least-once retry. The subject goes out through `oneLine` (plain-text.ts): a control
 * character in a stored name can never start a new header line.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { parseConnectionUrl } from 'nodemailer/lib/shared';
import { oneLine } from '../model/plain-text.js';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  /** Stable per delivery; becomes the Message-ID `<id@switchyard>`. */
  messageId: string;
  date: Date;
}

export interface Mailer {
  readonly kind: 'smtp' | 'outbox';
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

export interface MailerOptions {
  smtpUrl?: string | undefined;
  dataDir: string;
  from: string;
  /** `smtp_allow_insecure_auth`: allow AUTH without TLS (default false). */
  allowInsecureAuth?: boolean | undefined;
}

export function createMailer(options: MailerOptions): Mailer {
  return options.smtpUrl === undefined
    ? outboxMailer(options.dataDir, options.from)
    : smtpMailer(options.smtpUrl, options.from, options.allowInsecureAuth === true);
}

/** True when the URL carries a user name or password (then TLS is required, see header). */
export function smtpUrlHasCredentials(smtpUrl: string): boolean {
  const auth = parseConnectionUrl(smtpUrl).auth;
  return auth !== undefined && (auth.user !== '' || auth.pass !== '');
}

/** An attempt refused because the server would not encrypt and the URL carries credentials. */
export class SmtpTlsRequiredError extends Error {
  readonly code = 'ETLSREQUIRED';
  constructor(cause: unknown) {
    super(
      'the SMTP server did not start TLS, and smtp_url carries credentials: nothing was sent ' +
        '(use smtps://, a server offering STARTTLS, or smtp_allow_insecure_auth: true)',
      { cause },
    );
    this.name = 'SmtpTlsRequiredError';
  }
}

function envelope(mail: OutgoingMail, from: string) {
  return {
    from,
    to: mail.to,
    subject: oneLine(mail.subject),
    text: mail.text,
    messageId: `<${mail.messageId}@switchyard>`,
    date: mail.date,
  };
}

function smtpMailer(smtpUrl: string, from: string, allowInsecureAuth: boolean): Mailer {
  const requireTls = smtpUrlHasCredentials(smtpUrl) && !allowInsecureAuth;
  const transport = nodemailer.createTransport({
    ...parseConnectionUrl(smtpUrl),
    // After the URL's own options, so its query cannot turn them off. With `smtps://` (secure) the
    // connection is TLS from the start and requireTLS changes nothing.
    ...(requireTls ? { requireTLS: true, ignoreTLS: false, opportunisticTLS: false } : {}),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    logger: false,
    debug: false,
  });
  return {
    kind: 'smtp',
    async send(mail) {
      try {
        await transport.sendMail(envelope(mail, from));
      } catch (err) {
        // Nodemailer reports a refused or impossible STARTTLS as ETLS (or as the STARTTLS command failing).
        const failed = err as { code?: unknown; command?: unknown };
        if (requireTls && (failed.code === 'ETLS' || failed.command === 'STARTTLS')) {
          throw new SmtpTlsRequiredError(err);
        }
        throw err;
      }
    },
    close() {
      transport.close();
    },
  };
}

function outboxMailer(dataDir: string, from: string): Mailer {
  const outbox = join(dataDir, 'outbox');
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    kind: 'outbox',
    async send(mail) {
      const info = await transport.sendMail(envelope(mail, from));
      await mkdir(outbox, { recursive: true });
      const stamp = mail.date.toISOString().replace(/[:.]/g, '-');
      const safeId = mail.messageId.replace(/[^A-Za-z0-9_-]/g, '');
      const file = join(outbox, `${stamp}-${safeId}.eml`);
      const temp = `${file}.tmp`;
      await writeFile(temp, info.message as Buffer);
      await rename(temp, file);
    },
    close() {
      transport.close();
    },
  };
}
