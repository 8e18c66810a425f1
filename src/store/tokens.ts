/**
 * API tokens. A token is `swy_` + 40 base62 characters (≈238 bits), shown once at creation; only its
 * sha256 is stored, so a copy of the database does not grant access. Each token belongs to one account
 * and is read-only or read-write. `last_used_on` is refreshed at most once an hour per token, so
 * authentication does not turn every read into a write.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { newId, timestamp } from './ids.js';
import type { Database } from './schema.js';

export const TOKEN_PREFIX = 'swy_';
const TOKEN_LENGTH = 40;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** What a bearer credential may look like (ours, or a Cloudflare-style 40-character token). */
export const TOKEN_SHAPE = /^[A-Za-z0-9_-]{20,200}$/;
const TOUCH_INTERVAL_MS = 3_600_000;

export interface TokenInfo {
  id: string;
  account_id: string;
  name: string;
  read_only: boolean;
  created_on: string;
  last_used_on: string | null;
}

export interface CreatedToken extends TokenInfo {
  /** The secret; returned once and never stored. */
  token: string;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function generateToken(): string {
  let out = TOKEN_PREFIX;
  while (out.length < TOKEN_PREFIX.length + TOKEN_LENGTH) {
    for (const byte of randomBytes(64)) {
      // 248 = 4 × 62: rejecting larger bytes keeps every character equally likely.
      if (byte < 248 && out.length < TOKEN_PREFIX.length + TOKEN_LENGTH) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export async function createToken(
  db: Kysely<Database>,
  clock: Clock,
  input: { accountId: string; name?: string | undefined; readOnly: boolean },
): Promise<CreatedToken> {
  const token = generateToken();
  const row = {
    id: newId(),
    account_id: input.accountId,
    name: input.name ?? '',
    token_hash: hashToken(token),
    read_only: input.readOnly ? 1 : 0,
    created_on: timestamp(clock),
    last_used_on: null,
  };
  await db.insertInto('api_tokens').values(row).execute();
  return { ...toInfo(row), token };
}

/** The token whose secret this is, or undefined. Compares hashes only. */
export async function findTokenBySecret(
  db: Kysely<Database>,
  clock: Clock,
  secret: string,
): Promise<TokenInfo | undefined> {
  const row = await db
    .selectFrom('api_tokens')
    .select(['id', 'account_id', 'name', 'read_only', 'created_on', 'last_used_on'])
    .where('token_hash', '=', hashToken(secret))
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const now = clock.now();
  if (row.last_used_on === null || Date.parse(row.last_used_on) + TOUCH_INTERVAL_MS <= now) {
    const used = timestamp(clock);
    await db.updateTable('api_tokens').set({ last_used_on: used }).where('id', '=', row.id).execute();
    row.last_used_on = used;
  }
  return toInfo(row);
}

function toInfo(row: {
  id: string;
  account_id: string;
  name: string;
  read_only: number;
  created_on: string;
  last_used_on: string | null;
}): TokenInfo {
  return {
    id: row.id,
    account_id: row.account_id,
    name: row.name,
    read_only: Number(row.read_only) === 1,
    created_on: row.created_on,
    last_used_on: row.last_used_on,
  };
}
