/**
 * The bytes of a request. The head — `<METHOD> <path> HTTP/1.1` and the given headers, in order — is
 * built once per target and ends with `content-length: `; each request only appends its length, the blank
 * line and the body, into one buffer written with one socket write. A request without a body is whole
 * from `bodilessRequest`. Which headers an origin gets is the caller's business (the gateway:
 * model/origin-request.ts).
 */

/** The fixed head of every request to `path` with these headers (throws TypeError if unusable). */
export function requestHead(method: string, path: string, headers: Iterable<readonly [string, string]>): Buffer {
  return Buffer.from(`${headLines(method, path, headers)}content-length: `, 'latin1');
}

/**
 * A whole request without a body (no Content-Length, which RFC 9110 §8.6 asks not to send when the
 * method expects no content): the request line and headers as `requestHead` checks them.
 */
export function bodilessRequest(method: string, path: string, headers: Iterable<readonly [string, string]>): Buffer {
  return Buffer.from(`${headLines(method, path, headers)}\r\n`, 'latin1');
}

/** The request line and header lines, each ending in CRLF (throws TypeError if unusable). */
function headLines(method: string, path: string, headers: Iterable<readonly [string, string]>): string {
  if (!TOKEN.test(method)) throw new TypeError('the method is not an HTTP token');
  // Stored addresses are canonical (no spaces or controls); a hand-edited row must not split the request line.
  if (hasControl(path) || path.includes(' '))
    throw new TypeError('the address path has characters HTTP does not allow');
  let head = `${method} ${path} HTTP/1.1\r\n`;
  for (const [name, value] of headers) {
    // The config schema refuses these already; a head with CR/LF in it would split the request.
    if (!TOKEN.test(name) || hasControl(value)) {
      throw new TypeError(`the header ${name} has characters HTTP does not allow`);
    }
    head += `${name}: ${value}\r\n`;
  }
  return head;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A control character other than HTAB (CR and LF included). */
function hasControl(value: string): boolean {
  for (let i = 0; i < value.length; i += 1) {
    const c = value.charCodeAt(i);
    if ((c < 32 && c !== 9) || c === 127) return true;
  }
  return false;
}

/**
 * `head` + the body's length + CRLF + `lines` + CRLF + `body`, as one buffer. `lines` are header lines
 * of this request only, each ending in CRLF, already checked by the caller (latin1, no stray CR or LF).
 */
export function requestBytes(head: Buffer, body: Buffer, lines = ''): Buffer {
  const length = String(body.length);
  const out = Buffer.allocUnsafe(head.length + length.length + 4 + lines.length + body.length);
  head.copy(out, 0);
  let at = head.length + out.write(length, head.length, 'latin1');
  at += out.write('\r\n', at, 'latin1');
  if (lines.length > 0) at += out.write(lines, at, 'latin1');
  at += out.write('\r\n', at, 'latin1');
  body.copy(out, at);
  return out;
}
