/**
 * API tokens. A token is `swy_` + 40 base62 characters (≈238 bits), shown once at creation and at each
 * roll; only its sha256 is stored, so a copy of the database does not grant access. Each token belongs
 * to one account and carries Cloudflare-style policies (accounts/token-permissions.ts) from which its
 * access — read-only or read-write, the `read_only` column — is derived when it is written.
 *
 * Lifecycle: `status` is stored as `active` or `disabled`; a token whose `expires_on` has passed is
 * `expired` (derived from the clock, never stored, so it needs no sweeper). A token is usable only when
 * active, not expired and past its `not_before`. Authentication reads the row on every request — no
 * cache — so a disable, delete, roll or expiry is seen by the very next request in every process that
 * shares the store. `last_used_on` is refreshed at most once an hour per token (and only on accepted
 * use), so authentication does not turn every read into a write.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { newId, timestamp } from '../store/ids.js';
import type { Database } from '../store/schema.js';
import type { ApiTokensTable } from '../store/tables/core.js';
import { defaultPolicies, grantsWrite, type TokenPolicy } from './token-permissions.js';

export const TOKEN_PREFIX = 'swy_';
const TOKEN_LENGTH = 40;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** What a bearer credential may look like (ours, or a Cloudflare-style 40-character token). */
export const TOKEN_SHAPE = /^[A-Za-z0-9_-]{20,200}$/;
const TOUCH_INTERVAL_MS = 3_600_000;

export type TokenStatus = 'active' | 'disabled' | 'expired';

export interface TokenInfo {
  id: string;
  account_id: string;
  name: string;
  read_only: boolean;
  /** As stored: `active` or `disabled`. See `tokenStatus` for the effective one. */
  status: 'active' | 'disabled';
  policies: TokenPolicy[];
  expires_on: string | null;
  not_before: string | null;
  created_on: string;
  modified_on: string;
  last_used_on: string | null;
}

export interface CreatedToken extends TokenInfo {
  /** The secret; returned once and never stored. */
  token: string;
}

/** What a token may do: the policies as given (API), or plain read-only / read-write (CLI). */
export type TokenGrant = { policies: TokenPolicy[] } | { readOnly: boolean };

/** The validity window and status a create or update sets. */
export interface TokenLifecycle {
  status?: 'active' | 'disabled';
  expires_on?: string | null;
  not_before?: string | null;
}

const COLUMNS = [
  'id',
  'account_id',
  'name',
  'read_only',
  'status',
  'policies',
  'expires_on',
  'not_before',
  'created_on',
  'modified_on',
  'last_used_on',
] as const;

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

/** The effective status at `nowMs`: disabled wins over expired; `not_before` does not change it. */
export function tokenStatus(token: TokenInfo, nowMs: number): TokenStatus {
  if (token.status === 'disabled') return 'disabled';
  if (token.expires_on !== null && Date.parse(token.expires_on) <= nowMs) return 'expired';
  return 'active';
}

/** Why the token cannot be used at `nowMs`, or undefined when it can. */
export function tokenRefusal(token: TokenInfo, nowMs: number): string | undefined {
  const status = tokenStatus(token, nowMs);
  if (status === 'disabled') return 'the API token is disabled';
  if (status === 'expired') return 'the API token has expired';
  if (token.not_before !== null && nowMs < Date.parse(token.not_before)) {
    return `the API token is not valid before ${token.not_before}`;
  }
  return undefined;
}

export async function createToken(
  db: Kysely<Database>,
  clock: Clock,
  input: { accountId: string; name?: string | undefined } & TokenGrant & TokenLifecycle,
): Promise<CreatedToken> {
  const token = generateToken();
  const id = newId();
  const policies = 'policies' in input ? input.policies : defaultPolicies(newId(), input.accountId, input.readOnly);
  const now = timestamp(clock);
  const row: ApiTokensTable = {
    id,
    account_id: input.accountId,
    name: input.name ?? '',
    token_hash: hashToken(token),
    read_only: grantsWrite(policies) ? 0 : 1,
    status: input.status ?? 'active',
    policies: JSON.stringify(policies),
    expires_on: input.expires_on ?? null,
    not_before: input.not_before ?? null,
    created_on: now,
    modified_on: now,
    last_used_on: null,
  };
  await db.insertInto('api_tokens').values(row).execute();
  return { ...toInfo(row), token };
}

/** The token whose secret this is, whatever its status, or undefined. Compares hashes only. */
export async function findTokenBySecret(db: Kysely<Database>, secret: string): Promise<TokenInfo | undefined> {
  const row = await db
    .selectFrom('api_tokens')
    .select(COLUMNS)
    .where('token_hash', '=', hashToken(secret))
    .executeTakeFirst();
  return row === undefined ? undefined : toInfo(row);
}

/** Records an accepted use: refreshes `last_used_on` when it is older than an hour (or unset). */
export async function touchToken(db: Kysely<Database>, clock: Clock, token: TokenInfo): Promise<TokenInfo> {
  if (token.last_used_on !== null && Date.parse(token.last_used_on) + TOUCH_INTERVAL_MS > clock.now()) return token;
  const used = timestamp(clock);
  await db.updateTable('api_tokens').set({ last_used_on: used }).where('id', '=', token.id).execute();
  return { ...token, last_used_on: used };
}

export async function getToken(db: Kysely<Database>, accountId: string, id: string): Promise<TokenInfo | undefined> {
  const row = await db
    .selectFrom('api_tokens')
    .select(COLUMNS)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : toInfo(row);
}

export interface TokenListFilter {
  /** Leave out tokens whose expires_on is at or before this instant (RFC 3339); unset keeps them. */
  unexpiredAt?: string;
  direction?: 'asc' | 'desc';
}

export async function countTokens(
  db: Kysely<Database>,
  accountId: string,
  filter: TokenListFilter = {},
): Promise<number> {
  let query = db
    .selectFrom('api_tokens')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('account_id', '=', accountId);
  const at = filter.unexpiredAt;
  if (at !== undefined) query = query.where((eb) => eb.or([eb('expires_on', 'is', null), eb('expires_on', '>', at)]));
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Oldest first (or newest first with `direction: desc`); ties broken by id so pages never overlap. */
export async function listTokens(
  db: Kysely<Database>,
  accountId: string,
  limit: number,
  offset: number,
  filter: TokenListFilter = {},
): Promise<TokenInfo[]> {
  const direction = filter.direction ?? 'asc';
  let query = db.selectFrom('api_tokens').select(COLUMNS).where('account_id', '=', accountId);
  const at = filter.unexpiredAt;
  if (at !== undefined) query = query.where((eb) => eb.or([eb('expires_on', 'is', null), eb('expires_on', '>', at)]));
  const rows = await query
    .orderBy('created_on', direction)
    .orderBy('id', direction)
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map(toInfo);
}

/** Replaces name, policies and lifecycle fields in one statement; false when no such token. */
export async function updateToken(
  db: Kysely<Database>,
  clock: Clock,
  accountId: string,
  id: string,
  next: {
    name: string;
    policies: TokenPolicy[];
    status: 'active' | 'disabled';
    expires_on: string | null;
    not_before: string | null;
  },
): Promise<boolean> {
  const result = await db
    .updateTable('api_tokens')
    .set({
      name: next.name,
      policies: JSON.stringify(next.policies),
      read_only: grantsWrite(next.policies) ? 0 : 1,
      status: next.status,
      expires_on: next.expires_on,
      not_before: next.not_before,
      modified_on: timestamp(clock),
    })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Gives the token a new secret; the old one stops working with this statement. Undefined when no such token. */
export async function rollToken(
  db: Kysely<Database>,
  clock: Clock,
  accountId: string,
  id: string,
): Promise<string | undefined> {
  const token = generateToken();
  const result = await db
    .updateTable('api_tokens')
    .set({ token_hash: hashToken(token), modified_on: timestamp(clock) })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0 ? token : undefined;
}

export async function deleteToken(db: Kysely<Database>, accountId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('api_tokens')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

function toInfo(row: Omit<ApiTokensTable, 'token_hash'>): TokenInfo {
  return {
    id: row.id,
    account_id: row.account_id,
    name: row.name,
    read_only: Number(row.read_only) === 1,
    // Fails closed: a status this version does not know counts as disabled.
    status: row.status === 'active' ? 'active' : 'disabled',
    policies: decodePolicies(row),
    expires_on: row.expires_on,
    not_before: row.not_before,
    created_on: row.created_on,
    modified_on: row.modified_on,
    last_used_on: row.last_used_on,
  };
}

/**
 * The stored policies; a value that is not a JSON list (a hand edit, a bad restore) reads as the one
 * policy `read_only` stands for, as migration 004 writes it — `read_only` is what access is decided on.
 */
function decodePolicies(row: Pick<ApiTokensTable, 'id' | 'account_id' | 'read_only' | 'policies'>): TokenPolicy[] {
  try {
    const parsed: unknown = JSON.parse(row.policies);
    if (Array.isArray(parsed) && parsed.length > 0) return parsed as TokenPolicy[];
  } catch {
    // fall through to the derived policy
  }
  return defaultPolicies(row.id, row.account_id, Number(row.read_only) === 1);
}
