/**
 * Reads a JSON request body: at most `limit` bytes (413 beyond, without buffering the rest), only
 * `application/json` or `application/*+json` (415 otherwise), and parsed with JSON.parse (400 / 1002
 * when it is not JSON). An empty body reads as `undefined`, so the schema decides whether it is needed.
 * A string or key holding U+0000 is refused (400 / 1002) on every route: PostgreSQL text cannot store
 * it, so accepting it would make the same request work on SQLite and fail with a 500 on PostgreSQL.
 */
import type { IncomingMessage } from 'node:http';
import { SwitchyardError } from '../errors/base.js';

export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const type = header.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  if (!isJsonContentType(req.headers['content-type'])) {
    throw new SwitchyardError('API_UNSUPPORTED_MEDIA_TYPE', 'Send the request body as Content-Type: application/json');
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let hasNul = false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, (key, value: unknown) => {
      if (key.includes('\0') || (typeof value === 'string' && value.includes('\0'))) hasNul = true;
      return value;
    });
  } catch {
    throw new SwitchyardError('API_VALIDATION', 'body: the request body is not valid JSON');
  }
  if (hasNul) throw new SwitchyardError('API_VALIDATION', 'body: strings may not contain the NUL character (\\u0000)');
  return parsed;
}

function tooLarge(limit: number): SwitchyardError {
  // The rest of the body is not read: close the connection rather than leave it half-consumed.
  return new SwitchyardError(
    'API_BODY_TOO_LARGE',
    `The request body is larger than ${limit} bytes (api.max_body_bytes)`,
    {
      headers: { connection: 'close' },
    },
  );
}
