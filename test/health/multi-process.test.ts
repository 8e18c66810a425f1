/**
 * Several `serve` processes on one database record each health change once. Two monitors with their own
 * store connections stand in for two processes (on PostgreSQL when SWITCHYARD_TEST_DATABASE_URL is set —
 * the PostgreSQL pass of scripts/run-tests.mjs — else on one SQLite file). They check the same pool at the
 * same moments: the lease lets one check at a time, the compare-and-set keeps even forced concurrent
 * writers from recording a change twice, and a stopped holder's pool is taken over without a duplicate.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { runPoolRound } from '../../src/health/round.js';
import { withMonitorDefaults } from '../../src/model/monitor-schema.js';
import { openStore, type Store } from '../../src/store/database.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { storeOptions, type TestStoreLocation, testStoreLocation } from '../helpers/store.js';
import { describeEvent, type Harness, makePool, startHarness } from './harness.js';
import { TestOrigin } from './test-origin.js';

const monitor = { type: 'http' as const, timeout: 1, retries: 0, interval: 5 };

describe('two processes on one database', () => {
  let a: TestOrigin;
  let b: TestOrigin;
  let location: TestStoreLocation;
  let stores: Store[];
  let harnesses: Harness[];
  const clock = new ManualClock('2026-03-01T00:00:00Z');

  before(async () => {
    a = await TestOrigin.start();
    b = await TestOrigin.start();
    location = await testStoreLocation();
    stores = [await openStore(storeOptions(location)), await openStore(storeOptions(location))];
    const pool = makePool('p', [
      { name: 'a', address: a.url },
      { name: 'b', address: b.url },
    ]);
    harnesses = await Promise.all(
      stores.map((store) => startHarness({ pools: [pool], monitors: { m1: monitor }, store, clock })),
    );
  });
  after(async () => {
    for (const h of harnesses) await h.close();
    for (const store of stores) await store.close();
    location.cleanup();
    await a.down();
    await b.down();
  });

  it('records one event per change while both run rounds at the same moments', async () => {
    const [first, second] = harnesses as [Harness, Harness];
    const steps: Array<'up' | 'down'> = ['up', 'down', 'down', 'up', 'down', 'up'];
    for (const step of steps) {
      if (step === 'down') await a.down();
      else await a.up();
      clock.advance(5_000);
      const outcomes = await Promise.all([first.monitor.checkPool('p'), second.monitor.checkPool('p')]);
      assert.deepEqual(outcomes.map((o) => o?.kind).sort(), ['checked', 'standby'], 'one checks, one stands by');
    }
    const events = (await first.events()).map((event) => describeEvent(event));
    assert.deepEqual(events, [
      'origin a Healthy->Unhealthy',
      'origin a Unhealthy->Healthy',
      'origin a Healthy->Unhealthy',
      'origin a Unhealthy->Healthy',
    ]);
    // The standby learns the state from the store.
    await second.monitor.refresh();
    await first.monitor.refresh();
    assert.equal(second.monitor.live.origin('p', 'a')?.status, 'Healthy');
  });

  it('keeps one event per change when two writers get past the lease at once', async () => {
    const [first, second] = harnesses as [Harness, Harness];
    await a.down();
    clock.advance(60_000); // past the harness monitors' lease, so the racers can take it
    const pool = first.directory.allPools()[0]!;
    const plan = { pool, monitor: withMonitorDefaults(monitor), expectedChainIds: [], leaseMs: -1 };
    const before = (await first.events()).length;
    // leaseMs -1: every lease is already expired, so both writers get past it and probe at once.
    const outcomes = await Promise.all(
      [first, second].map((h, i) => runPoolRound({ ...contextOf(h), owner: `racer-${i}` }, plan)),
    );
    const kinds = outcomes.map((o) => o.kind).sort();
    const events = (await first.events()).slice(before).map((event) => describeEvent(event));
    assert.deepEqual(events, ['origin a Healthy->Unhealthy'], `outcomes ${kinds.join(',')}`);
    await a.up();
  });

  it('hands a stopped holder’s pools over without repeating a change', async () => {
    const [first, second] = harnesses as [Harness, Harness];
    await first.monitor.refresh();
    await second.monitor.refresh();
    const holder =
      (await Promise.all([first.monitor.checkPool('p'), second.monitor.checkPool('p')]))[0]?.kind === 'checked'
        ? first
        : second;
    const other = holder === first ? second : first;
    const before = (await first.events()).length;
    await holder.monitor.stop();
    await b.down();
    clock.advance(5_000);
    const outcome = await other.monitor.checkPool('p');
    assert.equal(outcome?.kind, 'checked', 'the other process took the lease at once');
    const events = (await other.events()).slice(before).map((event) => describeEvent(event));
    assert.deepEqual(events, ['origin b Healthy->Unhealthy']);
    await b.up();
  });
});

describe('two whole apps (serve processes) on one database', () => {
  it('record each health change once', async () => {
    const a = await TestOrigin.start();
    const b = await TestOrigin.start();
    const location = await testStoreLocation();
    const raw = {
      ...(location.database_url === undefined
        ? { data_dir: location.data_dir }
        : { database_url: location.database_url }),
      // Both processes seal and open the store's secrets with one key.
      secrets_key_file: join(location.data_dir, 'secrets.key'),
      networks: { sepolia: { chain_id: 11_155_111, pools: ['shared'] } },
      pools: [
        {
          name: 'shared',
          origins: [
            { name: 'a', address: a.url },
            { name: 'b', address: b.url },
          ],
          monitor: { type: 'jsonrpc', interval: 1, timeout: 1, retries: 0 },
        },
      ],
    };
    const apps: TestApp[] = [];
    try {
      // Down before either app starts: the first state both can establish is Unhealthy. Taken down
      // later, a slow start lets a first round establish Healthy and the expected first event differs.
      await a.down();
      apps.push(await startApp(raw), await startApp(raw));
      const db = apps[0]!.store.db;
      const changes = async () =>
        (await db.selectFrom('health_events').selectAll().orderBy('seq').execute()).map(
          (e) => `${e.event_source} ${e.origin_name ?? e.pool_name} ${e.previous}->${e.new_health}`,
        );
      const generation = async () =>
        Number(
          (await db.selectFrom('origin_health').select('generation').where('origin_name', '=', 'a').executeTakeFirst())
            ?.generation ?? 0,
        );
      /** Waits until `event` was recorded and then three more rounds ran, so a duplicate would have shown. */
      const settle = async (event: string) => {
        const deadline = Date.now() + 20_000;
        while (!(await changes()).includes(event)) {
          assert.ok(Date.now() < deadline, `no "${event}" within 20 s`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const target = (await generation()) + 3;
        while ((await generation()) < target) {
          assert.ok(Date.now() < deadline, 'the monitors stopped checking');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };
      await settle('origin a Unknown->Unhealthy');
      await a.up();
      await settle('origin a Unhealthy->Healthy');
      await a.down();
      await settle('origin a Healthy->Unhealthy');
      assert.deepEqual(await changes(), [
        'origin a Unknown->Unhealthy',
        'origin a Unhealthy->Healthy',
        'origin a Healthy->Unhealthy',
      ]);
    } finally {
      for (const app of apps) await app.close();
      location.cleanup();
      await a.down();
      await b.down();
    }
  });
});

/** The round context a harness's monitor uses, rebuilt for a direct runPoolRound call. */
function contextOf(h: Harness) {
  return h.monitor.roundContext();
}
