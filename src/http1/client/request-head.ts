/**
 * The bytes of a request to an origin. The head — `POST <path> HTTP/1.1` and the origin's request headers
 * (balancing/origin-request.ts: host, JSON content type, the origin's `header` map, Basic auth from the
 * address's user:password; the jsonrpc monitor sends the very same) — is built once per origin and ends
 * with `content-length: `; each request only appends its length, the blank line and the body, into one
 * buffer written with one socket write.
 */

import type { AddressTarget } from '../../model/origin-address.js';
import { originRequestHeaders } from '../../model/origin-request.js';
import type { Origin } from '../../model/pool.js';

/** The fixed head of every request to `target` for this origin (throws TypeError if unusable). */
export function requestHead(target: AddressTarget, origin: Pick<Origin, 'address' | 'header'>): Buffer {
  // Stored addresses are canonical (no spaces or controls); a hand-edited row must not split the request line.
  if (hasControl(target.path) || target.path.includes(' '))
    throw new TypeError('the address path has characters HTTP does not allow');
  let head = `POST ${target.path} HTTP/1.1\r\n`;
  for (const [name, value] of originRequestHeaders(origin, target)) {
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
