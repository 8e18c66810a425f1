import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../clock.js';
import { bucketOf, LATENCY_BUCKETS, mergeRows, p50, statsRowsOf } from '../model/origin-stats.js';
import { OriginStats } from './origin-stats.js';

const MINUTE = 60_000;

test('counts per origin and minute; a drain resets; a minute roll-over keeps the past minute', () => {
  const clock = new ManualClock(10 * MINUTE + 1_000);
  const stats = new OriginStats(clock);
  stats.record('p', 'a', 3, true);
  stats.record('p', 'a', 30, false);
  stats.record('p', 'b', 0.5, true);
  clock.advance(MINUTE);
  stats.record('p', 'a', 700, true);
  const rows = stats.drain();
  const view = rows.map((r) => [r.origin_name, r.minute, r.requests, r.errors]).sort();
  assert.deepEqual(view, [
    ['a', 10, 2, 1],
    ['a', 11, 1, 0],
    ['b', 10, 1, 0],
  ]);
  const a10 = rows.find((r) => r.origin_name === 'a' && r.minute === 10);
  assert.equal(a10?.buckets[bucketOf(3)], 1);
  assert.equal(a10?.buckets[bucketOf(30)], 1);
  assert.deepEqual(stats.drain(), []);
});

test('rows added from elsewhere (a worker, a failed flush) merge with local counts', () => {
  const clock = new ManualClock(5 * MINUTE);
  const stats = new OriginStats(clock);
  stats.record('p', 'a', 1, true);
  const worker = new OriginStats(clock);
  worker.record('p', 'a', 1, false);
  worker.record('p', 'a', 1, true);
  // Through the IPC report's JSON, as the control receives it.
  stats.add(statsRowsOf(JSON.parse(JSON.stringify(worker.drain()))));
  const rows = stats.drain();
  assert.equal(rows.length, 1);
  assert.equal(rows[0]?.requests, 3);
  assert.equal(rows[0]?.errors, 1);
  assert.equal(rows[0]?.buckets[0], 3);
  assert.deepEqual(
    statsRowsOf([{ pool_id: 'p', origin_name: 'a', minute: 1, requests: 1, errors: 0, buckets: [1] }]),
    [],
  );
  assert.deepEqual(statsRowsOf('garbage'), []);
  assert.equal(mergeRows([...rows, ...rows])[0]?.requests, 6);
});

test('p50 is interpolated inside the median bucket; none without counts', () => {
  const buckets = LATENCY_BUCKETS.map(() => 0);
  assert.equal(p50(buckets), undefined);
  buckets[bucketOf(30)] = 10; // the 20..50 ms bucket
  assert.equal(p50(buckets), 35);
  buckets[bucketOf(20_000)] = 100; // the open bucket holds the median: its lower bound
  assert.equal(p50(buckets), 10_000);
});
