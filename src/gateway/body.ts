/**
 * Reads a request body up to `limit` bytes. A Content-Length over the limit is refused before reading;
 * a body that grows past it while streaming is refused as soon as it does (BODY_TOO_LARGE, 413). After
 * a refusal the rest of the body is not read, so the response asks the client to close the connection.
 */
import type { IncomingMessage } from 'node:http';
import { SwitchyardError } from '../errors/base.js';

function tooLarge(limit: number): SwitchyardError {
  return new SwitchyardError(
    'BODY_TOO_LARGE',
    `The request body is larger than ${limit} bytes (gateway.max_body_bytes); send smaller requests or split the batch.`,
    { details: { max_body_bytes: limit }, headers: { connection: 'close' } },
  );
}

export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}
