import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { composeMail, MAX_LINE_OCTETS, type OutgoingMail, plainEncoding } from './mail-message.js';

const FROM = 'Switchyard <sy@example.net>';
const URL_LINE = `  https://switchyard.example.internal:8443/client/v4/accounts/${'a'.repeat(32)}/alerting/v3/policies/${'b'.repeat(32)}?page=1&per_page=25`;

function mail(text: string): OutgoingMail {
  return {
    to: 'ops@example.com',
    subject: '[Switchyard] Pool main is Unhealthy',
    text,
    messageId: 'msg_0123',
    date: new Date('2026-03-01T12:00:00Z'),
  };
}

function split(bytes: Buffer): { headers: string; body: string } {
  const raw = bytes.toString('utf8');
  const at = raw.indexOf('\r\n\r\n');
  return { headers: raw.slice(0, at), body: raw.slice(at + 4) };
}

describe('composeMail', () => {
  test('UTF-8 text goes out as 8bit, byte for byte, with CRLF lines and no soft breaks', async () => {
    const text = `Healthy → Unhealthy\n${URL_LINE}\n`;
    const composed = await composeMail(mail(text), FROM, true);
    const { headers, body } = split(composed.bytes);
    assert.equal(composed.encoding, '8bit');
    assert.match(headers, /^Content-Transfer-Encoding: 8bit$/m);
    assert.match(headers, /^Content-Type: text\/plain; charset=utf-8$/m);
    assert.match(headers, /^Message-ID: <msg_0123@switchyard>$/m);
    assert.match(headers, /^Date: Sun, 01 Mar 2026 12:00:00 \+0000$/m);
    assert.equal(body, text.replace(/\n/g, '\r\n'));
    assert.deepEqual(composed.envelope, { from: 'sy@example.net', to: ['ops@example.com'] });
  });

  test('ASCII text is 7bit even with lines over 76 characters; a missing final line break is added', async () => {
    const composed = await composeMail(mail(`line one\n${URL_LINE}`), FROM, false);
    assert.equal(composed.encoding, '7bit');
    assert.equal(split(composed.bytes).body, `line one\r\n${URL_LINE}\r\n`);
  });

  test('non-ASCII text where 8-bit is not allowed falls back to quoted-printable', async () => {
    const composed = await composeMail(mail('Healthy → Unhealthy\n'), FROM, false);
    assert.equal(composed.encoding, 'quoted-printable');
    assert.match(split(composed.bytes).body, /Healthy =E2=86=92 Unhealthy/);
  });

  test('a line over 998 octets (counted in UTF-8 bytes) is never sent unencoded', () => {
    assert.equal(plainEncoding(`${'x'.repeat(MAX_LINE_OCTETS)}\r\n`, true), '7bit');
    assert.equal(plainEncoding(`${'x'.repeat(MAX_LINE_OCTETS + 1)}\r\n`, true), undefined);
    // 333 arrows are 333 characters but 999 octets.
    assert.equal(plainEncoding(`${'→'.repeat(332)}xx\r\n`, true), '8bit');
    assert.equal(plainEncoding(`${'→'.repeat(333)}\r\n`, true), undefined);
    assert.equal(plainEncoding('a\0b\r\n', true), undefined, 'NUL is not allowed in 8bit');
  });

  test('the fallback keeps a very long line whole: every encoded line fits, nothing is cut', async () => {
    const long = `reason: ${'→'.repeat(400)}`;
    const composed = await composeMail(mail(`${long}\n`), FROM, true);
    assert.notEqual(composed.encoding, '8bit');
    const { body } = split(composed.bytes);
    assert.ok(body.split('\r\n').every((line) => Buffer.byteLength(line) <= 78));
    const decoded =
      composed.encoding === 'base64'
        ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
        : Buffer.from(
            body
              .replace(/=\r\n/g, '')
              .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
            'latin1',
          ).toString('utf8');
    assert.equal(decoded, `${long}\r\n`);
  });

  test('a non-ASCII subject and sender name become RFC 2047 encoded words; the body stays 8bit', async () => {
    const composed = await composeMail(
      { ...mail('ü\n'), subject: 'Pool Zürich is Unhealthy' },
      'Wächter <w@example.net>',
      true,
    );
    const { headers } = split(composed.bytes);
    assert.match(headers, /^Subject: =\?UTF-8\?Q\?Pool_Z=C3=BCrich_is_Unhealthy\?=$/m);
    assert.match(headers, /^From: =\?UTF-8\?Q\?W=C3=A4chter\?= <w@example.net>$/m);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: headers must be ASCII
    assert.match(headers, /^[\x00-\x7f]*$/);
    assert.equal(composed.encoding, '8bit');
  });
});
