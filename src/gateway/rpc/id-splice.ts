/** The JSON-RPC id splice on raw bytes: rpc/ owns ids, upstream/ uses the same splice on the way up. */
import type { UpstreamReply } from './forwarder.js';
import type { RpcCall } from './request.js';

type Span = { start: number; end: number };

/** The id bytes `null`: a notification's, and those of an answer whose request's id is unknown. */
export const NULL_ID = Buffer.from('null');

/**
 * `raw` with the span `id` replaced, in one allocation: by our ASCII id on the way up (origin-forwarder.ts), by
 * the client's raw id bytes on the way back (handler.ts).
 */
export function withId(raw: Buffer, id: Span, replacement: Buffer | string): Buffer {
  const out = Buffer.allocUnsafe(splicedLength(raw, id, replacement));
  writeSpliced(out, 0, raw, id, replacement);
  return out;
}

/** The length of `raw` with `id` replaced by `replacement` (either undefined: `raw` as it is). */
export function splicedLength(raw: Buffer, id: Span | undefined, replacement: Buffer | string | undefined): number {
  return id === undefined || replacement === undefined
    ? raw.length
    : raw.length - (id.end - id.start) + replacement.length;
}

/**
 * Writes `raw` into `out` at `at` with `id` replaced by `replacement` (a string: latin1; either undefined:
 * `raw` as it is), for answers and upstream batches written into one buffer. Returns the offset after it.
 */
export function writeSpliced(
  out: Buffer,
  at: number,
  raw: Buffer,
  id: Span | undefined,
  replacement: Buffer | string | undefined,
): number {
  if (id === undefined || replacement === undefined) return at + copy(raw, 0, raw.length, out, at);
  at += copy(raw, 0, id.start, out, at);
  at +=
    typeof replacement === 'string'
      ? out.write(replacement, at, 'latin1')
      : copy(replacement, 0, replacement.length, out, at);
  return at + copy(raw, id.end, raw.length, out, at);
}

/** Pieces below this many bytes are copied byte by byte: cheaper than Buffer#copy's call for a few bytes. */
const SMALL = 64;

function copy(from: Buffer, start: number, end: number, out: Buffer, at: number): number {
  const n = end - start;
  if (n < SMALL) for (let k = 0; k < n; k += 1) out[at + k] = from[start + k] as number;
  else from.copy(out, at, start, end);
  return n;
}

/** The origin's answer with the client's raw id in place of ours. */
export function splice(reply: Pick<UpstreamReply, 'body' | 'id'>, call: Pick<RpcCall, 'idBytes'>): Buffer {
  const id = reply.id;
  if (id === undefined) return reply.body;
  return withId(reply.body, id, call.idBytes);
}
