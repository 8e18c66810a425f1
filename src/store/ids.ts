/**
 * Identifiers and timestamps as the store writes them: ids are 32 lowercase hex (Cloudflare's shape),
 * timestamps RFC 3339 in UTC with milliseconds, so text order is time order on both backends.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';

export const ID_PATTERN = /^[0-9a-f]{32}$/;

export function newId(): string {
  return randomBytes(16).toString('hex');
}

export function timestamp(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}

/** True for a unique/primary-key violation on either backend (SQLite or PostgreSQL 23505). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
