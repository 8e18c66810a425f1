// Migration 004 on a store made before the tokens API: tokens created then (read-only and read-write)
// keep working, and the tokens API lists them with the permission group matching their access.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { Kysely, type Migration, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { READ_GROUP_ID, WRITE_GROUP_ID } from '../../src/accounts/token-permissions.js';
import { generateToken, hashToken } from '../../src/accounts/tokens.js';
import { buildConfig } from '../../src/config/load.js';
import { coreMigration } from '../../src/store/migrations/001_core.js';
import { healthMigration } from '../../src/store/migrations/002_health.js';
import { notificationsMigration } from '../../src/store/migrations/003_notifications.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { type TestStoreLocation, testStoreLocation } from '../helpers/store.js';

/** The store as release 003 left it: only the first three migrations, no token lifecycle columns. */
async function migrateTo003(location: TestStoreLocation): Promise<Kysely<unknown>> {
  const dialect = location.database_url === undefined ? 'sqlite' : 'postgres';
  const db =
    dialect === 'sqlite'
      ? new Kysely<unknown>({
          dialect: new SqliteDialect({ database: new SQLite(join(location.data_dir, 'switchyard.db')) }),
        })
      : new Kysely<unknown>({
          dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: location.database_url }) }),
        });
  const migrations: Record<string, Migration> = {
    '001_core': coreMigration(dialect),
    '002_health': healthMigration(dialect),
    '003_notifications': notificationsMigration(dialect),
  };
  const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateToLatest();
  if (error !== undefined) throw error;
  return db;
}

describe('migration 004 on tokens made before the tokens API', () => {
  let location: TestStoreLocation;
  let app: TestApp;
  let account_id = '';
  const secrets = { read: generateToken(), write: generateToken() };
  const ids = { read: 'a'.repeat(32), write: 'b'.repeat(32) };
  const created = '2025-01-02T03:04:05.000Z';

  before(async () => {
    location = await testStoreLocation();
    const old = await migrateTo003(location);
    const shared = {
      data_dir: location.data_dir,
      ...(location.database_url ? { database_url: location.database_url } : {}),
    };
    try {
      // The routing account of the config the app starts with below (the default account_id).
      account_id = buildConfig(shared, 'test').account_id;
      const raw = old as unknown as Kysely<Record<string, Record<string, unknown>>>;
      await raw.insertInto('accounts').values({ id: account_id, name: 'default', created_on: created }).execute();
      for (const kind of ['read', 'write'] as const) {
        await raw
          .insertInto('api_tokens')
          .values({
            id: ids[kind],
            account_id,
            name: `old ${kind}`,
            token_hash: hashToken(secrets[kind]),
            read_only: kind === 'read' ? 1 : 0,
            created_on: created,
            last_used_on: null,
          })
          .execute();
      }
    } finally {
      await old.destroy();
    }
    app = await startApp(shared);
  });
  after(async () => {
    await app?.close();
    location?.cleanup();
  });

  const call = async (token: string, path: string, init: RequestInit = {}) => {
    const res = await fetch(`${app.apiUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    return { status: res.status, body: (await res.json()) as { result: unknown } };
  };

  test('old tokens keep their access', async () => {
    assert.equal((await call(secrets.read, '/user/tokens/verify')).status, 200);
    assert.equal((await call(secrets.write, '/user/tokens/verify')).status, 200);
    const pool = JSON.stringify({ name: 'p', origins: [{ name: 'o', address: '127.0.0.1:1' }] });
    const path = `/accounts/${account_id}/load_balancers/pools`;
    assert.equal((await call(secrets.read, path, { method: 'POST', body: pool })).status, 403);
    assert.equal((await call(secrets.write, path, { method: 'POST', body: pool })).status, 200);
  });

  test('the tokens API lists them with the matching permission group', async () => {
    const res = await call(secrets.read, `/accounts/${account_id}/tokens`);
    assert.equal(res.status, 200);
    const byId = new Map((res.body.result as Array<Record<string, unknown>>).map((token) => [token.id, token]));
    for (const [kind, group, name] of [
      ['read', READ_GROUP_ID, 'Switchyard Read'],
      ['write', WRITE_GROUP_ID, 'Switchyard Write'],
    ] as const) {
      const token = byId.get(ids[kind]);
      assert.ok(token, kind);
      const { last_used_on, ...rest } = token;
      assert.equal(typeof last_used_on, 'string', 'used by the test above');
      assert.deepEqual(rest, {
        id: ids[kind],
        name: `old ${kind}`,
        status: 'active',
        policies: [
          {
            id: ids[kind],
            effect: 'allow',
            permission_groups: [{ id: group, name }],
            resources: { [`com.cloudflare.api.account.${account_id}`]: '*' },
          },
        ],
        issued_on: created,
        modified_on: created,
      });
    }
  });
});
