/**
 * Gateway keys in the store (both backends): only the hash is stored; the directory's table holds the
 * routing account's enabled keys, follows this process's writes at once (refresh) and another
 * connection's writes by polling; its snapshot is plain JSON another process can load; usage adds up
 * across recorders, survives a failed flush (kept for the next, logged once), is flushed on stop, and
 * seeds the daily quota after a restart.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openTestStore, storeOptions } from '../../test/helpers/store.js';
import { ensureAccount } from '../accounts/accounts.js';
import { ManualClock } from '../clock.js';
import { LocalQuotaCounter } from '../gateway/rpc/quota.js';
import { createLogger } from '../log.js';
import { keyDigest, StaticKeyTable } from '../model/gateway-keys.js';
import { openStore, type Store } from '../store/database.js';
import { createGatewayKey, deleteGatewayKey, rollGatewayKey, updateGatewayKey } from './key-queries.js';
import { StoreKeyDirectory } from './store-key-directory.js';
import { addUsage, usageBetween } from './usage-queries.js';
import { UsageRecorder } from './usage-recorder.js';

const ROUTING = 'a1'.repeat(16);
const OTHER = 'b2'.repeat(16);
const logger = createLogger({ level: 'silent' });
const clock = new ManualClock('2026-06-01T08:00:00Z');
const FIELDS = { name: 'k', enabled: true, networks: null, rate_limit: null, daily_quota: null };

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('gateway keys in the store', () => {
  let test: Awaited<ReturnType<typeof openTestStore>>;
  let store: Store;
  let directory: StoreKeyDirectory;

  before(async () => {
    test = await openTestStore();
    store = test.store;
    await ensureAccount(store.db, clock, ROUTING, 'routing');
    await ensureAccount(store.db, clock, OTHER, 'other');
    directory = await StoreKeyDirectory.start({ store, accountId: ROUTING, logger });
  });
  after(async () => {
    directory?.close();
    await test?.close();
  });

  it('stores only the SHA-256 of the value', async () => {
    const key = await createGatewayKey(store.db, clock, ROUTING, FIELDS);
    const row = await store.db
      .selectFrom('gateway_keys')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.key_hash, keyDigest(key.value));
    assert.ok(!JSON.stringify(row).includes(key.value));
  });

  it("holds the routing account's enabled keys, current after refresh()", async () => {
    const key = await createGatewayKey(store.db, clock, ROUTING, { ...FIELDS, networks: ['sepolia'], daily_quota: 9 });
    const other = await createGatewayKey(store.db, clock, OTHER, FIELDS);
    await directory.refresh();
    assert.deepEqual(directory.lookup(keyDigest(key.value)), {
      id: key.id,
      digest: keyDigest(key.value),
      networks: ['sepolia'],
      rate_limit: null,
      daily_quota: 9,
    });
    assert.equal(directory.lookup(keyDigest(other.value)), undefined);
    await updateGatewayKey(store.db, clock, ROUTING, key.id, { ...FIELDS, enabled: false });
    await directory.refresh();
    assert.equal(directory.lookup(keyDigest(key.value)), undefined);
    assert.equal(directory.byId(key.id), undefined);
  });

  it("follows another connection's roll and delete by polling (within 1 s)", async () => {
    const key = await createGatewayKey(store.db, clock, ROUTING, FIELDS);
    await directory.refresh();
    const elsewhere = await openStore(storeOptions(test.location));
    try {
      let changes = 0;
      const unsubscribe = directory.onChange(() => {
        changes += 1;
      });
      const rolled = (await rollGatewayKey(elsewhere.db, clock, ROUTING, key.id)) as string;
      const rolledAt = Date.now();
      await until(() => directory.lookup(keyDigest(key.value)) === undefined, 1000, 'the old value refused');
      assert.ok(Date.now() - rolledAt < 1000);
      assert.equal(directory.lookup(keyDigest(rolled))?.id, key.id);
      await deleteGatewayKey(elsewhere.db, ROUTING, key.id);
      await until(() => directory.byId(key.id) === undefined, 1000, 'the deleted key gone');
      assert.ok(changes >= 2);
      unsubscribe();
    } finally {
      await elsewhere.close();
    }
  });

  it('a stored rate limit outside the sane bounds (written before they were checked) is read at the nearest bound', async () => {
    const slow = await createGatewayKey(store.db, clock, ROUTING, FIELDS);
    const fast = await createGatewayKey(store.db, clock, ROUTING, FIELDS);
    const garbled = await createGatewayKey(store.db, clock, ROUTING, FIELDS);
    const write = (id: string, rateLimit: string) =>
      store.db.updateTable('gateway_keys').set({ rate_limit: rateLimit, version: 99 }).where('id', '=', id).execute();
    await write(slow.id, '{"requests_per_second":5e-324,"burst":1}');
    await write(fast.id, '{"requests_per_second":1e300,"burst":1e300}');
    await write(garbled.id, '{"requests_per_second":"fast"}');
    await directory.refresh();
    const rateOf = (value: string) => directory.lookup(keyDigest(value))?.rate_limit;
    assert.deepEqual(rateOf(slow.value), { requests_per_second: 0.001, burst: 1 });
    assert.deepEqual(rateOf(fast.value), { requests_per_second: 1_000_000, burst: 1_000_000_000 });
    assert.deepEqual(rateOf(garbled.value), { requests_per_second: 1, burst: 1 }, 'unreadable: fails closed');
  });

  it('snapshot() is plain JSON that another process loads into the same table', async () => {
    const key = await createGatewayKey(store.db, clock, ROUTING, {
      ...FIELDS,
      rate_limit: { requests_per_second: 5, burst: 10 },
    });
    await directory.refresh();
    const copy = new StaticKeyTable(JSON.parse(JSON.stringify(directory.snapshot())));
    assert.deepEqual(copy.lookup(keyDigest(key.value)), directory.lookup(keyDigest(key.value)));
    assert.equal(copy.snapshot().version, directory.snapshot().version);
  });

  it('usage: recorders add up per key, day and network; stop() flushes what is left', async () => {
    const key = await createGatewayKey(store.db, clock, ROUTING, FIELDS);
    // A flush interval longer than the test: only stop() writes.
    const a = await UsageRecorder.start({ store, clock, logger, flushMs: 3_600_000 });
    const b = await UsageRecorder.start({ store, clock, logger, flushMs: 3_600_000 });
    a.count(key.id, 'sepolia', true);
    a.count(key.id, 'sepolia', false);
    b.count(key.id, 'sepolia', true);
    b.count(key.id, 'holesky', false);
    clock.set('2026-06-02T00:00:01Z');
    a.count(key.id, 'sepolia', true);
    assert.deepEqual(await usageBetween(store.db, key.id, '2026-06-01', '2026-06-02'), []);
    await a.stop();
    await b.stop();
    assert.deepEqual(await usageBetween(store.db, key.id, '2026-06-01', '2026-06-02'), [
      { date: '2026-06-01', network: 'holesky', requests: 1, errors: 1 },
      { date: '2026-06-01', network: 'sepolia', requests: 3, errors: 1 },
      { date: '2026-06-02', network: 'sepolia', requests: 1, errors: 0 },
    ]);
    const row = await store.db
      .selectFrom('gateway_keys')
      .select('last_used_on')
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.last_used_on, '2026-06-02T00:00:01.000Z');
  });

  it('adds many rows at once (several statements of one transaction), and adds to rows already there', async () => {
    const rows = Array.from({ length: 1201 }, (_, i) => ({
      key_id: 'c'.repeat(32),
      date: '2026-06-04',
      network: `net-${i}`,
      requests: 2,
      errors: 1,
    }));
    await addUsage(store.db, rows);
    await addUsage(store.db, rows.slice(0, 3));
    const usage = await usageBetween(store.db, 'c'.repeat(32), '2026-06-04', '2026-06-04');
    assert.equal(usage.length, 1201);
    assert.equal(
      usage.reduce((sum, row) => sum + row.requests, 0),
      1204 * 2,
    );
    assert.equal(usage.find((row) => row.network === 'net-0')?.errors, 2);
  });

  it('a failed flush keeps its counts for the next one (logged once), so none is lost', async () => {
    const key = await createGatewayKey(store.db, clock, ROUTING, FIELDS);
    clock.set('2026-06-05T09:00:00Z');
    const closed = await openStore(storeOptions(test.location));
    await closed.close();
    // The recorder reads `store.db` at each flush: first a closed connection, then the real one.
    let db = closed.db;
    const switching = {
      dialect: store.dialect,
      get db() {
        return db;
      },
      close: async () => {},
    } as Store;
    const errors: string[] = [];
    const recorder = await UsageRecorder.start({
      store: switching,
      clock,
      logger: createLogger({ level: 'error', write: (line) => errors.push(line) }),
      flushMs: 3_600_000,
    });
    recorder.count(key.id, 'sepolia', true);
    await recorder.flush();
    recorder.count(key.id, 'sepolia', false);
    await recorder.flush();
    assert.equal(errors.length, 1, 'one error line per outage');
    assert.deepEqual(await usageBetween(store.db, key.id, '2026-06-05', '2026-06-05'), []);
    db = store.db;
    await recorder.stop();
    assert.deepEqual(await usageBetween(store.db, key.id, '2026-06-05', '2026-06-05'), [
      { date: '2026-06-05', network: 'sepolia', requests: 2, errors: 1 },
    ]);
  });

  it("seeds the daily quota from the store's usage of today (a restart keeps the count)", async () => {
    clock.set('2026-06-03T12:00:00Z');
    const key = await createGatewayKey(store.db, clock, ROUTING, { ...FIELDS, daily_quota: 5 });
    const first = await UsageRecorder.start({ store, clock, logger, flushMs: 3_600_000 });
    for (let i = 0; i < 4; i += 1) first.count(key.id, 'sepolia', true);
    await first.stop();
    // "Restart": a fresh counter, seeded at start.
    const quota = new LocalQuotaCounter();
    const second = await UsageRecorder.start({
      store,
      clock,
      logger,
      flushMs: 3_600_000,
      observeTotals: (date, totals) => quota.observe(date, totals),
    });
    quota.spend(key.id, 5, 1, clock.now());
    assert.throws(() => quota.spend(key.id, 5, 1, clock.now()), { code: 'KEY_QUOTA_EXCEEDED' });
    await second.stop();
  });
});
