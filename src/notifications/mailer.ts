/**
 * Email out, behind one small interface with two implementations. Both send the message built by
 * mail-message.ts (`composeMail`): plain 7bit/8bit UTF-8 bodies where the path allows, so an `.eml` file
 * reads with `cat` (see that file for the encoding rule and the 998-octet line limit).
 *
 * - SMTP (`smtp_url` set): one nodemailer SMTPConnection per message, with short timeouts (connect and
 *   greeting 10 s, socket 30 s) so a dead mail server fails an attempt instead of holding its lease.
 *   Not nodemailer's SMTP transport: it composes the body before it has seen the server's EHLO, so it
 *   cannot send 8-bit only to servers that advertise 8BITMIME. Here the session runs connect (STARTTLS as
 *   below) → AUTH when the URL has credentials and the server offers AUTH → compose (8-bit allowed iff
 *   the EHLO reply lists 8BITMIME; then `MAIL FROM … BODY=8BITMIME`) → send → close, as the transport does.
 *   Nodemailer's own logger stays off; the URL is logged only through `maskAddress` (no user or password).
 *   Credentials never travel in clear text: when `smtp_url` carries a user or password, the connection
 *   must be TLS — `smtps://`, or STARTTLS required (nodemailer `requireTLS`); a server that offers no
 *   STARTTLS fails the attempt before AUTH is sent (`SmtpTlsRequiredError`, retried like any failure).
 *   `smtp_allow_insecure_auth: true` lifts this (STARTTLS is then used when offered, as before). The
 *   URL is parsed here and the TLS options are set after it, so a query such as `?ignoreTLS=true` or
 *   `?requireTLS=false` cannot weaken the rule. Other query options go to the SMTPConnection (`tls.*`,
 *   `name`, `authMethod`, …); transport-only ones (`pool`, `proxy`, `service`) have no effect.
 * - Outbox (no `smtp_url`): the same RFC 5322 message, 8-bit allowed, is written to
 *   `<data_dir>/outbox/<date>-<message id>.eml` (temp file + rename, so a file is never half-written).
 *   The name derives from the delivery's stable Message-ID, so a retried delivery rewrites its own file
 *   instead of adding a second one.
 *
 * Every message carries a Message-ID fixed per delivery (`<message id>@switchyard>`), so receivers can
 * de-duplicate an at-least-once retry. The subject goes out through `oneLine` (plain-text.ts): a control
 * character in a stored name can never start a new header line.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseConnectionUrl } from 'nodemailer/lib/shared';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { type ComposedMail, composeMail, type OutgoingMail } from './mail-message.js';

export type { OutgoingMail } from './mail-message.js';

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

function smtpMailer(smtpUrl: string, from: string, allowInsecureAuth: boolean): Mailer {
  const requireTls = smtpUrlHasCredentials(smtpUrl) && !allowInsecureAuth;
  const { auth, authMethod, forceAuth, ...fromUrl } = parseConnectionUrl(smtpUrl) as SMTPConnection.Options & {
    auth?: { user?: string; pass?: string };
    authMethod?: string;
    forceAuth?: boolean;
  };
  const options: SMTPConnection.Options = {
    ...fromUrl,
    // After the URL's own options, so its query cannot turn them off. With `smtps://` (secure) the
    // connection is TLS from the start and requireTLS changes nothing.
    ...(requireTls ? { requireTLS: true, ignoreTLS: false, opportunisticTLS: false } : {}),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    logger: false,
    debug: false,
  };
  const credentials =
    auth === undefined || (!auth.user && !auth.pass)
      ? undefined
      : { user: auth.user ?? '', pass: auth.pass ?? '', ...(authMethod ? { method: authMethod } : {}) };
  return {
    kind: 'smtp',
    async send(mail) {
      try {
        await smtpSession(options, credentials, forceAuth === true, (eightBit) => composeMail(mail, from, eightBit));
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
      // Nothing to close: each message has its own connection, closed when its session ends.
    },
  };
}

/** Nodemailer's test for the extension in an EHLO reply (smtp-connection `_parseEhloExtensions`). */
const EIGHT_BIT_MIME = /[ -]8BITMIME\b/im;

/** One SMTP session for one message (see header); rejects with nodemailer's error on any failure. */
async function smtpSession(
  options: SMTPConnection.Options,
  credentials: SMTPConnection.AuthenticationCredentials | undefined,
  forceAuth: boolean,
  compose: (eightBit: boolean) => Promise<ComposedMail>,
): Promise<void> {
  const connection = new SMTPConnection(options);
  // Some failures arrive only as an 'error' event, not through the step's callback: each step races it.
  // The listener stays for the connection's life, so a late error after close is never unhandled.
  let fail: (err: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failed.catch(() => {});
  connection.on('error', (err: Error) => fail(err));
  const step = <T>(run: (done: (err: Error | null | undefined, value?: T) => void) => void): Promise<T> =>
    Promise.race([
      failed,
      new Promise<T>((resolve, reject) => run((err, value) => (err ? reject(err) : resolve(value as T)))),
    ]);
  try {
    await step<void>((done) => connection.connect((err) => done(err)));
    // Right after connect the last reply is the EHLO that counts (the one after STARTTLS); a HELO
    // fallback or a plaintext session after a failed opportunistic STARTTLS reads as "no 8BITMIME".
    const eightBit = EIGHT_BIT_MIME.test(String(connection.lastServerResponse || ''));
    if (credentials !== undefined && (connection.allowsAuth || forceAuth)) {
      await step<boolean | undefined>((done) => connection.login(credentials, done));
    }
    const message = await compose(eightBit);
    await step((done) =>
      connection.send({ ...message.envelope, use8BitMime: message.encoding === '8bit' }, message.bytes, done),
    );
  } finally {
    connection.close();
  }
}

function outboxMailer(dataDir: string, from: string): Mailer {
  const outbox = join(dataDir, 'outbox');
  return {
    kind: 'outbox',
    async send(mail) {
      // A file travels no SMTP path: 8-bit is always allowed (lines still within 998 octets).
      const message = await composeMail(mail, from, true);
      await mkdir(outbox, { recursive: true });
      const stamp = mail.date.toISOString().replace(/[:.]/g, '-');
      const safeId = mail.messageId.replace(/[^A-Za-z0-9_-]/g, '');
      const file = join(outbox, `${stamp}-${safeId}.eml`);
      const temp = `${file}.tmp`;
      await writeFile(temp, message.bytes);
      await rename(temp, file);
    },
    close() {},
  };
}
