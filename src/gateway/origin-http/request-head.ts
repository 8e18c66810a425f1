/**
 * The bytes of a request to an origin. The head — `POST <path> HTTP/1.1`, host, content-type and
 * accept (JSON), the origin's configured headers, Basic auth from the address's user:password — is
 * built once per origin address and ends with `content-length: `; each request only appends its
 * length, the blank line and the body, into one buffer written with one socket write.
 */
import type { Origin } from '../../balancing/model.js';

/** Header names the client sets itself (framing and connection management): never taken from config. */
const OWN_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te']);

/** The fixed head of every request to `url` with the origin's `header` map (throws TypeError if unusable). */
export function requestHead(url: URL, header: Origin['header']): Buffer {
  const headers = new Map<string, string>([
    ['host', url.host],
    ['content-type', 'application/json'],
    ['accept', 'application/json'],
  ]);
  for (const [name, values] of Object.entries(header)) {
    const lower = name.toLowerCase();
    if (OWN_HEADERS.has(lower)) throw new TypeError(`the header ${name} is set by the HTTP client`);
    headers.set(lower, values.join(', '));
  }
  if (url.username !== '' || url.password !== '') {
    const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.set('authorization', `Basic ${Buffer.from(credentials).toString('base64')}`);
  }
  let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\n`;
  for (const [name, value] of headers) {
    // The config schema refuses these already; a head with CR/LF in it would split the request.
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name) || hasControl(value)) {
      throw new TypeError(`the header ${name} has characters HTTP does not allow`);
    }
    head += `${name}: ${value}\r\n`;
  }
  return Buffer.from(`${head}content-length: `, 'latin1');
}

/** A control character other than HTAB (CR and LF included). */
function hasControl(value: string): boolean {
  for (let i = 0; i < value.length; i += 1) {
    const c = value.charCodeAt(i);
    if ((c < 32 && c !== 9) || c === 127) return true;
  }
  return false;
}

/** `head` + the body's length + CRLFCRLF + `body`, as one buffer. */
export function requestBytes(head: Buffer, body: Buffer): Buffer {
  const length = String(body.length);
  const out = Buffer.allocUnsafe(head.length + length.length + 4 + body.length);
  head.copy(out, 0);
  let at = head.length + out.write(length, head.length, 'latin1');
  at += out.write('\r\n\r\n', at, 'latin1');
  body.copy(out, at);
  return out;
}
