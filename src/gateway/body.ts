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

export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge(limit));
  // Plain 'data'/'end' listeners: an async iterator per request costs noticeably more on the hot path.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const onAborted = (): void => onError(new Error('the client closed the connection before sending the whole body'));
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onClose = (): void => {
      if (!req.complete) onAborted();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
