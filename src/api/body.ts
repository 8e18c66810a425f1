/**
 * Reads a JSON request body: at most `limit` bytes (413 beyond, without buffering the rest), only
 * `application/json` or `application/*+json` (415 otherwise), and parsed with JSON.parse (400 / 1002
 * when it is not JSON). An empty body reads as `undefined`, so the schema decides whether it is needed.
 * A string or key holding U+0000 is refused (400 / 1002) on every route: PostgreSQL text cannot store
 * it, so accepting it would make the same request work on SQLite and fail with a 500 on PostgreSQL.
 * An object key `__proto__`, `constructor` or `prototype` anywhere in the body is refused too (400 / 1002
 * naming the key's path): a validator that copies objects drops `__proto__` silently (a policy's
 * `"filters": {"__proto__": […]}` would be stored without filters and match every event), and no
 * field of this API is called any of them. The check rides on JSON.parse's reviver; only a body that has
 * such a key is walked again, to name its path. A member given twice in one object, at any depth, is
 * refused too (400 / 1002 naming its path; keys compared decoded): JSON.parse would keep the last copy
 * silently, where a client or a proxy may have read the first (the gateway refuses a request member
 * given twice for the same reason); the check is gateway/rpc/json-members.ts, on the gateway's lexer.
 * A client that goes away before the body is complete raises `RequestAbortedError`: the server logs it
 * at debug and answers nothing (there is no one to answer), since it is the client's doing, not a fault.
 */
import type { IncomingMessage } from 'node:http';
import { SwitchyardError } from '../errors/base.js';
import { duplicateMember } from '../gateway/rpc/json-members.js';
import { jsonPointer } from './validate.js';

export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const type = header.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/** The client closed the connection while its request body was still arriving. */
export class RequestAbortedError extends Error {
  constructor(cause: unknown) {
    super('the client closed the connection before the request body was complete', { cause });
    this.name = 'RequestAbortedError';
  }
}

export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw tooLarge(limit);
      chunks.push(chunk);
    }
  } catch (err) {
    // Node ends the body stream of a vanished client with "aborted" (ECONNRESET); `complete` stays false.
    if (!(err instanceof SwitchyardError) && !req.complete) throw new RequestAbortedError(err);
    throw err;
  }
  // A stream already torn down when reading began ends quietly instead: the message is still incomplete.
  if (!req.complete) throw new RequestAbortedError(undefined);
  if (size === 0) return undefined;
  if (!isJsonContentType(req.headers['content-type'])) {
    throw new SwitchyardError('API_UNSUPPORTED_MEDIA_TYPE', 'Send the request body as Content-Type: application/json');
  }
  const bytes = Buffer.concat(chunks);
  const text = bytes.toString('utf8');
  let hasNul = false;
  let hasForbiddenKey = false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, function (this: unknown, key, value: unknown) {
      if (key.includes('\0') || (typeof value === 'string' && value.includes('\0'))) hasNul = true;
      // Array indexes arrive as keys too; only an object's own key can be one of these.
      if (FORBIDDEN_KEYS.has(key) && !Array.isArray(this)) hasForbiddenKey = true;
      return value;
    });
  } catch {
    throw new SwitchyardError('API_VALIDATION', 'body: the request body is not valid JSON');
  }
  if (hasForbiddenKey) throw forbiddenKey(parsed);
  if (hasNul) throw new SwitchyardError('API_VALIDATION', 'body: strings may not contain the NUL character (\\u0000)');
  const twice = duplicateMember(bytes);
  if (twice !== undefined) {
    throw new SwitchyardError('API_VALIDATION', `${twice.join('.')}: given twice; each member may appear once`, {
      details: { pointer: jsonPointer(twice) },
    });
  }
  return parsed;
}

/** Object keys no body may use (see header). */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** The error naming the first forbidden key, found depth first in document order. */
function forbiddenKey(body: unknown): SwitchyardError {
  const path = findForbiddenKey(body, []) ?? [];
  const field = path.length === 0 ? 'body' : path.join('.');
  return new SwitchyardError(
    'API_VALIDATION',
    `${field}: "${String(path.at(-1))}" is not allowed as a key anywhere in a request body`,
    { details: { pointer: jsonPointer(path) } },
  );
}

function findForbiddenKey(value: unknown, path: string[]): string[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  // Object.keys lists an own `__proto__` key that JSON.parse created (it is a data property, not the prototype).
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((item, i) => [String(i), item])
    : Object.keys(value).map((key) => [key, (value as Record<string, unknown>)[key]]);
  for (const [key, child] of entries) {
    if (!Array.isArray(value) && FORBIDDEN_KEYS.has(key)) return [...path, key];
    const found = findForbiddenKey(child, [...path, key]);
    if (found !== undefined) return found;
  }
  return undefined;
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
