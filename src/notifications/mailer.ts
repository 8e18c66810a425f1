/**
 * Email out, behind one small interface with two implementations:
 *
 * - SMTP (`smtp_url` set): nodemailer over `smtp://` or `smtps://`, with short timeouts (connect and
 *   greeting 10 s, socket 30 s) so a dead mail server fails an attempt instead of holding its lease.
 *   Nodemailer's own logger stays off; the URL is logged only through `maskAddress` (no user or password).
 * - Outbox (no `smtp_url`): nodemailer's stream transport builds the same RFC 5322 message, which is
 *   written to `<data_dir>/outbox/<date>-<message id>.eml` (temp file + rename, so a file is never
 *   half-written). The name derives from the delivery's stable Message-ID, so a retried delivery
 *   rewrites its own file instead of adding a second one.
 *
 * Every message carries a Message-ID fixed per delivery (`<message id>@switchyard`), so receivers can
 * de-duplicate an at-least-once retry.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';

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
}

export function createMailer(options: MailerOptions): Mailer {
  return options.smtpUrl === undefined
    ? outboxMailer(options.dataDir, options.from)
    : smtpMailer(options.smtpUrl, options.from);
}

function envelope(mail: OutgoingMail, from: string) {
  return {
    from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    messageId: `<${mail.messageId}@switchyard>`,
    date: mail.date,
  };
}

function smtpMailer(smtpUrl: string, from: string): Mailer {
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    logger: false,
    debug: false,
  });
  return {
    kind: 'smtp',
    async send(mail) {
      await transport.sendMail(envelope(mail, from));
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
