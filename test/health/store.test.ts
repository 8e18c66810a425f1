/**
 * The health store's guarantees, on SQLite or (with SWITCHYARD_TEST_DATABASE_URL) PostgreSQL: state
 * writes are compare-and-set on `generation`, the checker lease has one holder until it runs out, and
 * events come back in `seq` order with numeric seqs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertHealthEvent, latestHealthEventSeq, readHealthEvents } from '../../src/health/events.js';
import {
  acquirePoolLease,
  casOriginHealth,
  casPoolHealth,
  type OriginHealthRow,
  releasePoolLeases,
} from '../../src/health/state-queries.js';
import { openTestStore } from '../helpers/store.js';

describe('health store', () => {
  let opened: Awaited<ReturnType<typeof openTestStore>>;
  before(async () => {
    opened = await openTestStore();
  });
  after(() => opened.close());

  it('writes origin and pool state only from the generation the writer read', async () => {
    const db = opened.store.db;
    const row: OriginHealthRow = {
      pool_id: 'p',
      origin_name: 'a',
      origin_address: 'http://127.0.0.1:1/',
      status: 'Healthy',
      failures: 0,
      successes: 1,
      last_ok: 1,
      failure_reason: '',
      response_code: 200,
      rtt_ms: 3,
      checked_at: '2026-03-01T00:00:00.000Z',
      changed_at: null,
      generation: 1,
    };
    assert.equal(await casOriginHealth(db, row, null), true);
    assert.equal(await casOriginHealth(db, row, null), false, 'a second first write loses');
    assert.equal(await casOriginHealth(db, { ...row, generation: 2 }, 1), true);
    assert.equal(await casOriginHealth(db, { ...row, generation: 2, status: 'Unhealthy' }, 1), false, 'stale');
    const pool = { pool_id: 'p', account_id: 'x', status: 'Healthy' as const, changed_at: null, generation: 1 };
    assert.equal(await casPoolHealth(db, pool, null), true);
    assert.equal(await casPoolHealth(db, { ...pool, generation: 2 }, 1), true);
    assert.equal(await casPoolHealth(db, { ...pool, generation: 2 }, 1), false);
  });

  it('gives the checker lease to one owner until it runs out or is released', async () => {
    const db = opened.store.db;
    const lease = (owner: string, now: string, until: string) =>
      acquirePoolLease(db, { pool_id: 'q', account_id: 'x', owner, now, until });
    assert.equal(await lease('A', '2026-03-01T00:00:00.000Z', '2026-03-01T00:00:20.000Z'), true);
    assert.equal(await lease('B', '2026-03-01T00:00:05.000Z', '2026-03-01T00:00:25.000Z'), false);
    assert.equal(await lease('A', '2026-03-01T00:00:10.000Z', '2026-03-01T00:00:30.000Z'), true, 'renewal');
    assert.equal(await lease('B', '2026-03-01T00:00:31.000Z', '2026-03-01T00:00:51.000Z'), true, 'expired');
    await releasePoolLeases(db, 'B');
    assert.equal(await lease('C', '2026-03-01T00:00:32.000Z', '2026-03-01T00:00:52.000Z'), true, 'released');
  });

  it('returns events after a cursor in seq order', async () => {
    const db = opened.store.db;
    const base = {
      account_id: 'x',
      event_source: 'origin' as const,
      pool_id: 'p',
      pool_name: 'p',
      origin_name: 'a',
      origin_address: '127.0.0.1:1',
      reason: 'connection refused',
      occurred_at: '2026-03-01T00:00:00.000Z',
    };
    await insertHealthEvent(db, { ...base, id: 'e1', previous: 'Healthy', new_health: 'Unhealthy' });
    await insertHealthEvent(db, { ...base, id: 'e2', previous: 'Unhealthy', new_health: 'Healthy' });
    const all = await readHealthEvents(db, { afterSeq: 0 });
    assert.deepEqual(
      all.map((e) => e.id),
      ['e1', 'e2'],
    );
    assert.equal(typeof all[0]?.seq, 'number');
    const rest = await readHealthEvents(db, { afterSeq: all[0]?.seq ?? 0 });
    assert.deepEqual(
      rest.map((e) => e.id),
      ['e2'],
    );
    assert.equal(await latestHealthEventSeq(db), all[1]?.seq);
  });
});
