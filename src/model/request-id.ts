/**
 * Request ids (SPEC §16), the same rule for the gateway and the management API: a client's
 * `X-Request-Id` of 1–128 visible ASCII characters (0x21–0x7E: no space, no control) is kept as sent;
 * anything else — absent, empty, too long, with a space or a non-ASCII byte — is replaced by one made
 * here (a random UUID). The id goes back in the answer's `X-Request-Id`, into every log line about the
 * request, and on to the origins a gateway call reaches.
 */
import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'x-request-id';
export const MAX_REQUEST_ID_LENGTH = 128;

/** The client's id when usable, else a new one. */
export function requestIdOf(sent: string | undefined): string {
  return sent !== undefined && usableRequestId(sent) ? sent : randomUUID();
}

export function usableRequestId(id: string): boolean {
  if (id.length === 0 || id.length > MAX_REQUEST_ID_LENGTH) return false;
  for (let i = 0; i < id.length; i += 1) {
    const c = id.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}
