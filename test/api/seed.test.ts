// Start-up seeding from the config: created once, never overwritten (except the generated devnet pool's
// origin addresses), safe when two processes seed the same database at once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { systemClock } from '../../src/clock.js';
import { buildConfig } from '../../src/config/load.js';
import type { PoolConfig } from '../../src/config/schema.js';
import { listMonitors } from '../../src/health/monitor-queries.js';
import { silentLogger } from '../../src/log.js';
import { findPoolByName, listPools, updatePool } from '../../src/pools/pool-queries.js';
import { seedFromConfig } from '../../src/pools/seed.js';
import { openStore } from '../../src/store/database.js';
import { openTestSecrets, storeOptions, testStoreLocation } from '../helpers/store.js';

const ACCOUNT = 'd00dd00dd00dd00dd00dd00dd00dd00d';
const pool = (address: string): PoolConfig => ({
  name: 'devnet',
  origins: [{ name: 'node-0', address }],
  monitor: { type: 'jsonrpc', interval: 5 },
});

test('seeding: two processes at once create one pool and one monitor; reseeding overwrites nothing', async () => {
  const location = await testStoreLocation();
  const [a, b] = [await openStore(storeOptions(location)), await openStore(storeOptions(location))];
  const secretsOf = new Map([
    [a, await openTestSecrets(a, location.data_dir)],
    [b, await openTestSecrets(b, location.data_dir)],
  ]);
  const secrets = secretsOf.get(a) as NonNullable<ReturnType<typeof secretsOf.get>>;
  try {
    const seed = (store: typeof a, address: string, refresh: string[] = []) =>
      seedFromConfig({
        store,
        secrets: secretsOf.get(store) as typeof secrets,
        clock: systemClock,
        logger: silentLogger,
        accountId: ACCOUNT,
        pools: [pool(address)],
        refreshOrigins: refresh,
      });
    if (location.backend === 'postgres') {
      await Promise.all([seed(a, 'http://127.0.0.1:1001'), seed(b, 'http://127.0.0.1:1001')]);
    } else {
      // better-sqlite3 is synchronous: two connections in one thread would wait on each other's lock while
      // blocking the thread that must release it. Separate processes (serve + CLI) are fine; here, in turn.
      await seed(a, 'http://127.0.0.1:1001');
      await seed(b, 'http://127.0.0.1:1001');
    }
    const page = { offset: 0, limit: 100 };
    assert.equal((await listPools(a.db, secrets, a.dialect, ACCOUNT, page)).total, 1);
    assert.equal((await listMonitors(a.db, secrets, ACCOUNT, page)).total, 1);

    const created = await findPoolByName(a.db, secrets, ACCOUNT, 'devnet');
    assert.ok(created);
    await updatePool(a.db, secrets, a.dialect, systemClock, ACCOUNT, created.id, (current) => ({
      ...current,
      description: 'edited through the API',
    }));

    await seed(a, 'http://127.0.0.1:2002');
    const kept = await findPoolByName(a.db, secrets, ACCOUNT, 'devnet');
    assert.equal(kept?.origins[0]?.address, 'http://127.0.0.1:1001', 'config never overwrites');

    await seed(a, 'http://127.0.0.1:2002', ['devnet']);
    const refreshed = await findPoolByName(a.db, secrets, ACCOUNT, 'devnet');
    assert.equal(refreshed?.origins[0]?.address, 'http://127.0.0.1:2002', 'generated pool follows its nodes');
    assert.equal(refreshed?.description, 'edited through the API', 'nothing else changes');
    assert.equal(refreshed?.monitor, created.monitor);
    assert.equal((await listMonitors(a.db, secrets, ACCOUNT, page)).total, 1);
  } finally {
    await a.close();
    await b.close();
    location.cleanup();
  }
});

test('config pools are validated like API pools before anything is stored', () => {
  const withOrigin = (origin: Record<string, unknown>) => ({
    pools: [{ name: 'p', origins: [{ name: 'o', address: 'http://127.0.0.1:1', ...origin }] }],
  });
  for (const [origin, field] of [
    [{ address: 'ftp://node' }, /pools\.0\.origins\.0\.address/],
    [{ address: 'http://node:99999' }, /pools\.0\.origins\.0\.address/],
    [{ header: { Host: ['a\r\nb'] } }, /pools\.0\.origins\.0\.header/],
    [{ header: { 'Transfer-Encoding': ['chunked'] } }, /pools\.0\.origins\.0\.header/],
  ] as const) {
    assert.throws(() => buildConfig(withOrigin(origin), 'test.yaml'), field, JSON.stringify(origin));
  }
  assert.throws(
    () =>
      buildConfig({ pools: [{ name: 'p', origins: [{ name: 'o', address: 'h:1' }], notification_email: 'x@' }] }, 't'),
    /notification_email/,
  );
  assert.ok(buildConfig(withOrigin({ header: { Host: ['rpc.example'] } }), 'test.yaml'));
});
