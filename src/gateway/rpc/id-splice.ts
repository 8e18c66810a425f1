/** The JSON-RPC id splice on raw bytes: rpc/ owns ids, upstream/ uses the same splice on the way up. */
import type { UpstreamReply } from './forwarder.js';
import type { RpcCall } from './request.js';

/**
 * `raw` with the span `id` replaced, in one allocation: by our ASCII id on the way up (origin-forwarder.ts), by
 * the client's raw id bytes on the way back (handler.ts).
 */
export function withId(raw: Buffer, id: { start: number; end: number }, replacement: Buffer | string): Buffer {
  const out = Buffer.allocUnsafe(raw.length - (id.end - id.start) + replacement.length);
  raw.copy(out, 0, 0, id.start);
  if (typeof replacement === 'string') out.write(replacement, id.start, 'latin1');
  else replacement.copy(out, id.start);
  raw.copy(out, id.start + replacement.length, id.end);
  return out;
}

/** The origin's answer with the client's raw id in place of ours. */
export function splice(reply: Pick<UpstreamReply, 'body' | 'id'>, call: Pick<RpcCall, 'idBytes'>): Buffer {
  const id = reply.id;
  if (id === undefined) return reply.body;
  return withId(reply.body, id, call.idBytes);
}
