/**
 * One alert email as the bytes of an RFC 5322 message: a single `text/plain; charset=utf-8` part, CRLF
 * line endings. The headers are built by nodemailer's MimeNode (address and RFC 2047 encoded-word
 * handling, folding); the body is chosen here, because nodemailer always re-encodes a text body that
 * holds non-ASCII characters or a line over 76 characters as quoted-printable (`=E2=86=92`, `=` soft
 * breaks inside URLs), which is unreadable with `cat`.
 *
 * The body's Content-Transfer-Encoding, the first that fits:
 * - `7bit`: ASCII only and every line at most 998 octets (RFC 5322 §2.1.1) — the text as it is;
 * - `8bit`: UTF-8 text, every line at most 998 octets, no NUL (RFC 2045 §2.8), and the path allows it:
 *   always for the outbox, over SMTP only when the server advertised 8BITMIME (then `BODY=8BITMIME`);
 * - otherwise nodemailer's own choice, `quoted-printable` (`base64` for mostly non-ASCII text): a line
 *   longer than 998 octets (illegal unencoded; never cut or wrapped here, so nothing is lost), a NUL, or
 *   non-ASCII text to a server without 8BITMIME.
 * Alert bodies are short lines (the longest is an API URL, well under 998 octets), so in practice the
 * outbox is 7bit/8bit and quoted-printable is the lossless fallback for the edge cases.
 */
import MimeNode from 'nodemailer/lib/mime-node';
import { oneLine } from '../model/plain-text.js';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  /** Stable per delivery; becomes the Message-ID `<id@switchyard>`. */
  messageId: string;
  date: Date;
}

export type BodyEncoding = '7bit' | '8bit' | 'quoted-printable' | 'base64';

/** RFC 5322 §2.1.1 / RFC 2045 §2.8: at most 998 octets per line, not counting CRLF. */
export const MAX_LINE_OCTETS = 998;

export interface ComposedMail {
  /** The whole message, headers and body, CRLF line endings. */
  bytes: Buffer;
  encoding: BodyEncoding;
  /** SMTP envelope: the bare addresses of From and To. */
  envelope: { from: string; to: string[] };
}

/** The body's lines, CRLF-terminated; any LF, CR or CRLF in `text` is one line break. */
function crlfLines(text: string): string {
  const normalised = text.replace(/\r\n|\r|\n/g, '\r\n');
  return normalised.endsWith('\r\n') ? normalised : `${normalised}\r\n`;
}

/** The encoding `body` (CRLF lines) can travel in as it is, or undefined when none fits. */
export function plainEncoding(body: string, allow8bit: boolean): BodyEncoding | undefined {
  if (body.includes('\0')) return undefined;
  const lines = body.split('\r\n');
  if (lines.some((line) => Buffer.byteLength(line, 'utf8') > MAX_LINE_OCTETS)) return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
  if (/^[\x00-\x7f]*$/.test(body)) return '7bit';
  return allow8bit ? '8bit' : undefined;
}

/** Builds the message; `allow8bit` says whether the path carries 8-bit bodies (see header). */
export async function composeMail(mail: OutgoingMail, from: string, allow8bit: boolean): Promise<ComposedMail> {
  const body = crlfLines(mail.text);
  const plain = plainEncoding(body, allow8bit);
  const node = new MimeNode('text/plain; charset=utf-8');
  node.setHeader({
    From: from,
    To: mail.to,
    Subject: oneLine(mail.subject),
    Date: mail.date.toUTCString().replace(/GMT/, '+0000'),
    'Message-ID': `<${mail.messageId}@switchyard>`,
  });
  const envelope = node.getEnvelope() as { from: string; to: string[] };
  if (plain === undefined) {
    node.setContent(body);
    const bytes = await node.build();
    const chosen = String(node.getHeader('Content-Transfer-Encoding')) === 'base64' ? 'base64' : 'quoted-printable';
    return { bytes, encoding: chosen, envelope };
  }
  // Without content, MimeNode keeps the Content-Transfer-Encoding given here instead of choosing one.
  node.setHeader('Content-Transfer-Encoding', plain);
  const bytes = Buffer.from(`${node.buildHeaders()}\r\n\r\n${body}`, 'utf8');
  return { bytes, encoding: plain, envelope };
}
