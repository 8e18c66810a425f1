/**
 * What a store holds on disk, as bytes, to look for secrets that must not be there: on SQLite the
 * database file and its write-ahead log as they are (read while `serve` runs, so recent writes are still
 * in the WAL); on PostgreSQL a plain-text `pg_dump` of the database, made with the test cluster's own
 * binaries (test/helpers/postgres.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PG_BIN } from './postgres.js';
import type { TestStoreLocation } from './store.js';

export interface StoreImage {
  /** Which files (or the dump) the bytes come from, for messages. */
  readonly parts: ReadonlyArray<{ name: string; bytes: Buffer }>;
}

export function storeImage(location: Pick<TestStoreLocation, 'data_dir' | 'database_url'>): StoreImage {
  if (location.database_url !== undefined) {
    const dump = execFileSync(join(PG_BIN, 'pg_dump'), ['--no-owner', `--dbname=${location.database_url}`], {
      maxBuffer: 256 * 1024 * 1024,
      timeout: 120_000,
    });
    return { parts: [{ name: 'pg_dump', bytes: dump }] };
  }
  const file = join(location.data_dir, 'switchyard.db');
  const parts = [{ name: 'switchyard.db', bytes: readFileSync(file) }];
  if (existsSync(`${file}-wal`)) parts.push({ name: 'switchyard.db-wal', bytes: readFileSync(`${file}-wal`) });
  return { parts };
}

/** The secrets (and where) found among the image's bytes. */
export function secretsIn(image: StoreImage, secrets: readonly string[]): string[] {
  const found: string[] = [];
  for (const part of image.parts) {
    for (const secret of secrets)
      if (part.bytes.includes(Buffer.from(secret, 'utf8'))) found.push(`${secret} in ${part.name}`);
  }
  return found;
}
