import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../clock.js';
import { isSwitchyardError } from '../../errors/base.js';
import { RateLimiter, rateSpec } from './rate-limit.js';

function limited(run: () => void): { retryAfter: string } {
  let header = '';
  assert.throws(run, (err: unknown) => {
    assert.ok(isSwitchyardError(err));
    assert.equal(err.code, 'RATE_LIMITED');
    assert.equal(err.httpStatus, 429);
    header = err.headers['retry-after'] ?? '';
    return true;
  });
  return { retryAfter: header };
}

/** A limiter whose every bucket has the limit `options` (as `gateway.rate_limit` gives it). */
function limiterOf(options: { requests_per_second: number; burst?: number }, clock: ManualClock) {
  const limiter = new RateLimiter(clock);
  const spec = rateSpec(options);
  return { take: (client: string, cost: number) => limiter.take(client, spec, cost) };
}

describe('RateLimiter', () => {
  it('allows a burst, then refills at the configured rate', () => {
    const clock = new ManualClock(0);
    const limiter = limiterOf({ requests_per_second: 2, burst: 4 }, clock);
    for (let i = 0; i < 4; i += 1) limiter.take('a', 1);
    assert.equal(limited(() => limiter.take('a', 1)).retryAfter, '1');
    clock.advance(500);
    limiter.take('a', 1);
    limited(() => limiter.take('a', 1));
  });

  it('keeps clients apart', () => {
    const limiter = limiterOf({ requests_per_second: 1, burst: 1 }, new ManualClock(0));
    limiter.take('a', 1);
    limiter.take('b', 1);
    limited(() => limiter.take('a', 1));
  });

  it('charges a batch per call and refuses batches larger than the burst', () => {
    const clock = new ManualClock(0);
    const limiter = limiterOf({ requests_per_second: 1, burst: 5 }, clock);
    limiter.take('a', 5);
    assert.equal(limited(() => limiter.take('a', 3)).retryAfter, '3');
    clock.advance(60_000);
    assert.equal(limited(() => limiter.take('a', 6)).retryAfter, '5');
    limiter.take('a', 5);
  });

  it('buckets of different specs live side by side (e.g. per gateway key)', () => {
    const limiter = new RateLimiter(new ManualClock(0));
    const small = rateSpec({ requests_per_second: 1, burst: 1 });
    const large = rateSpec({ requests_per_second: 10, burst: 10 });
    limiter.take('small', small, 1);
    limited(() => limiter.take('small', small, 1));
    for (let i = 0; i < 10; i += 1) limiter.take('large', large, 1);
    limited(() => limiter.take('large', large, 1));
  });

  it('defaults the burst to the rate (at least 1)', () => {
    const limiter = limiterOf({ requests_per_second: 0.5 }, new ManualClock(0));
    limiter.take('a', 1);
    assert.equal(limited(() => limiter.take('a', 1)).retryAfter, '2');
  });
});
