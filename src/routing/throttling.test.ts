import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../clock.js';
import type { Origin } from '../model/pool.js';
import { DEFAULT_BENCH_MS, MAX_BENCH_MS, OriginThrottle } from './throttling.js';

const origin = (name: string, cap?: number): Origin => ({
  name,
  address: 'http://127.0.0.1:1/',
  enabled: true,
  weight: 1,
  header: {},
  ...(cap === undefined ? {} : { max_requests_per_second: cap }),
});

describe('benched origins', () => {
  it('are skipped for their Retry-After (default 1 s, at most 10 min); a longer bench stays', () => {
    const clock = new ManualClock(0);
    const throttle = new OriginThrottle(clock);
    const a = origin('a');
    throttle.bench('p', 'a', undefined);
    assert.equal(throttle.available('p', a), false);
    assert.equal(throttle.wait('p', a), DEFAULT_BENCH_MS);
    clock.advance(DEFAULT_BENCH_MS);
    assert.equal(throttle.available('p', a), true);
    throttle.bench('p', 'a', 5_000);
    throttle.bench('p', 'a', 1_000);
    assert.equal(throttle.wait('p', a), 5_000, 'a shorter bench does not shorten a longer one');
    throttle.bench('p', 'a', 86_400_000);
    assert.equal(throttle.wait('p', a), MAX_BENCH_MS);
    assert.equal(throttle.available('q', a), true, 'per pool');
  });
});

describe('max_requests_per_second', () => {
  it("allows a burst of one second's worth, then the rate; at the cap the origin is skipped", () => {
    const clock = new ManualClock(0);
    const throttle = new OriginThrottle(clock);
    const paid = origin('paid', 5);
    let taken = 0;
    for (let i = 0; i < 20; i += 1) if (throttle.take('p', paid)) taken += 1;
    assert.equal(taken, 5);
    assert.equal(throttle.available('p', paid), false);
    assert.equal(Math.round(throttle.wait('p', paid)), 200);
    clock.advance(1_000);
    taken = 0;
    for (let i = 0; i < 20; i += 1) if (throttle.take('p', paid)) taken += 1;
    assert.equal(taken, 5);
    assert.equal(throttle.take('p', origin('free')), true, 'no cap: always');
  });

  it('each of N workers holds 1/N of the rate; under one a second still allows one request', () => {
    const clock = new ManualClock(0);
    const half = new OriginThrottle(clock, 1 / 2);
    let taken = 0;
    for (let i = 0; i < 20; i += 1) if (half.take('p', origin('paid', 10))) taken += 1;
    assert.equal(taken, 5);
    const slow = new OriginThrottle(clock);
    assert.equal(slow.take('p', origin('trickle', 0.5)), true);
    assert.equal(slow.take('p', origin('trickle', 0.5)), false);
    clock.advance(2_000);
    assert.equal(slow.take('p', origin('trickle', 0.5)), true);
  });
});
