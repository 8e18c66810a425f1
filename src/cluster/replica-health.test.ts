import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pool } from '../model/pool.js';
import { PoolSnapshot } from '../model/pool-snapshot.js';
import type { HealthReport } from './messages.js';
import { ReplicaHealthView } from './replica-health.js';

const pool = {
  id: 'p1',
  account_id: 'acct',
  name: 'primary',
  enabled: true,
  minimum_origins: 1,
  origins: [
    { name: 'a', address: 'http://127.0.0.1:1', enabled: true, weight: 1, header: {} },
    { name: 'b', address: 'http://127.0.0.1:2', enabled: false, weight: 1, header: {} },
  ],
} as unknown as Pool;

function view() {
  const directory = new PoolSnapshot({ accountId: 'acct' });
  directory.replace([pool]);
  const sent: HealthReport[][] = [];
  const health = new ReplicaHealthView(directory, {}, (reports) => sent.push(reports));
  return { health, sent };
}

test('verdicts come from the push; an origin it does not know yet is healthy while enabled', () => {
  const { health } = view();
  assert.equal(health.originHealthy('p1', 'a'), true);
  assert.equal(health.originHealthy('p1', 'b'), false, 'disabled');
  assert.equal(health.poolHealthy('p1'), true);
  assert.equal(health.poolHealthy('p2'), false, 'unknown pool');
  health.replace({ p1: { healthy: false, origins: { a: false, b: false } } });
  assert.equal(health.originHealthy('p1', 'a'), false);
  assert.equal(health.poolHealthy('p1'), false);
});

test('live outcomes go to the control in order, a run of successes once per flush', () => {
  const { health, sent } = view();
  health.reportSuccess('p1', 'a');
  health.reportSuccess('p1', 'a');
  health.reportFailure('p1', 'a', 'timed out', 'timeout');
  health.reportSuccess('p1', 'a');
  health.reportSuccess('p1', 'a');
  health.flush();
  assert.deepEqual(sent, [
    [
      { pool: 'p1', origin: 'a', ok: true },
      { pool: 'p1', origin: 'a', ok: false, reason: 'timed out', kind: 'timeout' },
      { pool: 'p1', origin: 'a', ok: true },
    ],
  ]);
  health.reportSuccess('p1', 'a');
  health.flush();
  assert.deepEqual(sent[1], [{ pool: 'p1', origin: 'a', ok: true }], 'the next flush may carry a success again');
  health.flush();
  assert.equal(sent.length, 2, 'nothing queued: nothing sent');
});
