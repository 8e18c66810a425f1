/**
 * Readable mail (issue 15): the same UTF-8 alert text sent through the mailer to the `.eml` outbox and to
 * real SMTP servers (smtp-server on port 0, STARTTLS + AUTH) with and without 8BITMIME.
 * - outbox: the file holds the literal text (`→`, every URL whole), Content-Transfer-Encoding 8bit;
 * - SMTP advertising 8BITMIME: 8bit body sent with `MAIL FROM … BODY=8BITMIME`;
 * - SMTP without 8BITMIME: a 7-bit-clean quoted-printable body, no BODY parameter;
 * - a line over 998 octets: quoted-printable on every path, never cut;
 * and what arrives always decodes to exactly the text that was sent.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createMailer } from '../../src/notifications/mailer.js';
import { parseMail, startSmtp } from './helpers.js';

const ACCOUNT = '0123456789abcdef0123456789abcdef';
const URLS = [
  `https://switchyard.example.internal:8443/client/v4/accounts/${ACCOUNT}/alerting/v3/policies/6a1f0c3e-8d2b-4f7a-9c11-2b3d4e5f6a7b`,
  `https://switchyard.example.internal:8443/client/v4/accounts/${ACCOUNT}/load_balancers/pools?page=1&per_page=25`,
];
const TEXT = [
  'Origin "node-ü" in pool "zürich" changed health: Healthy → Unhealthy.',
  '',
  '  Change:      Healthy → Unhealthy',
  '  Reason:      timeout after 2 s',
  '',
  'To change or stop it, edit or delete the policy:',
  ...URLS.map((url) => `  ${url}`),
  '',
].join('\n');

function outgoing(text: string) {
  return {
    to: 'ops@example.com',
    subject: '[Switchyard] Origin node-ü (pool zürich) is Unhealthy',
    text,
    messageId: `msg_${Math.random().toString(16).slice(2)}`,
    date: new Date('2026-03-01T12:00:00Z'),
  };
}

function bodyOf(raw: string): string {
  return raw.slice(raw.indexOf('\r\n\r\n') + 4);
}

async function sendOverSmtp(text: string, hide8BitMime: boolean) {
  const smtp = await startSmtp(undefined, undefined, [], { hide8BitMime });
  const mailer = createMailer({ smtpUrl: smtp.url, dataDir: '/nonexistent', from: 'Switchyard <sy@example.net>' });
  try {
    await mailer.send(outgoing(text));
    assert.equal(smtp.messages.length, 1);
    assert.equal(smtp.logins.length, 1, 'sent after AUTH');
    const [received] = smtp.messages;
    assert.ok(received);
    return received;
  } finally {
    mailer.close();
    await smtp.close();
  }
}

describe('readable mail bodies', () => {
  test('the outbox file holds the literal UTF-8 text, 8bit, every URL unbroken', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-outbox-'));
    const mailer = createMailer({ dataDir, from: 'Switchyard <sy@example.net>' });
    try {
      await mailer.send(outgoing(TEXT));
      const [file] = readdirSync(join(dataDir, 'outbox'));
      const raw = readFileSync(join(dataDir, 'outbox', file ?? ''), 'utf8');
      const mail = parseMail(raw);
      assert.equal(mail.headers['content-transfer-encoding'], '8bit');
      assert.equal(mail.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(bodyOf(raw), TEXT.replace(/\n/g, '\r\n'), 'the body is the text itself, CRLF lines');
      assert.ok(raw.includes('Healthy → Unhealthy'));
      for (const url of URLS) assert.ok(raw.includes(url), `unbroken: ${url}`);
      assert.ok(!/=\r\n/.test(bodyOf(raw)) && !raw.includes('=E2=86=92'), 'no quoted-printable in the body');
    } finally {
      mailer.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('SMTP with 8BITMIME: the body travels as 8bit with BODY=8BITMIME and decodes to the same text', async () => {
    const received = await sendOverSmtp(TEXT, false);
    assert.equal(received.bodyType, '8bitmime');
    const mail = parseMail(received.raw);
    assert.equal(mail.headers['content-transfer-encoding'], '8bit');
    assert.ok(received.raw.includes('Healthy → Unhealthy'));
    for (const url of URLS) assert.ok(received.raw.includes(url), `unbroken: ${url}`);
    assert.equal(mail.text, TEXT);
  });

  test('SMTP without 8BITMIME: a 7-bit quoted-printable body, no BODY parameter, the same text decoded', async () => {
    const received = await sendOverSmtp(TEXT, true);
    assert.equal(received.bodyType, '7bit');
    const mail = parseMail(received.raw);
    assert.equal(mail.headers['content-transfer-encoding'], 'quoted-printable');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the whole message must be 7-bit
    assert.match(received.raw, /^[\x00-\x7f]*$/);
    assert.equal(mail.text, TEXT);
  });

  test('a line over 998 octets is quoted-printable even where 8bit is allowed, and arrives whole', async () => {
    const long = `  Reason:      ${'answer→'.repeat(200)}`;
    const text = `${TEXT}${long}\n`;
    const received = await sendOverSmtp(text, false);
    assert.equal(received.bodyType, '7bit', 'no BODY=8BITMIME for an encoded body');
    const mail = parseMail(received.raw);
    assert.equal(mail.headers['content-transfer-encoding'], 'quoted-printable');
    assert.ok(received.raw.split('\r\n').every((line) => Buffer.byteLength(line) <= 998));
    assert.equal(mail.text, text);
  });
});
