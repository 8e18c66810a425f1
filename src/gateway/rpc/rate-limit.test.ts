import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../clock.js';
import { isSwitchyardError } from '../../errors/base.js';
import { RateLimiter } from './rate-limit.js';

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

describe('RateLimiter', () => {
  it('allows a burst, then refills at the configured rate', () => {
    const clock = new ManualClock(0);
    const limiter = new RateLimiter({ requests_per_second: 2, burst: 4 }, clock);
    for (let i = 0; i < 4; i += 1) limiter.take('a', 1);
    assert.equal(limited(() => limiter.take('a', 1)).retryAfter, '1');
    clock.advance(500);
    limiter.take('a', 1);
    limited(() => limiter.take('a', 1));
  });

  it('keeps clients apart', () => {
    const limiter = new RateLimiter({ requests_per_second: 1, burst: 1 }, new ManualClock(0));
    limiter.take('a', 1);
    limiter.take('b', 1);
    limited(() => limiter.take('a', 1));
  });

  it('charges a batch per call and refuses batches larger than the burst', () => {
    const clock = new ManualClock(0);
    const limiter = new RateLimiter({ requests_per_second: 1, burst: 5 }, clock);
    limiter.take('a', 5);
    assert.equal(limited(() => limiter.take('a', 3)).retryAfter, '3');
    clock.advance(60_000);
    assert.equal(limited(() => limiter.take('a', 6)).retryAfter, '5');
    limiter.take('a', 5);
  });

  it('defaults the burst to the rate (at least 1)', () => {
    const limiter = new RateLimiter({ requests_per_second: 0.5 }, new ManualClock(0));
    limiter.take('a', 1);
    assert.equal(limited(() => limiter.take('a', 1)).retryAfter, '2');
  });
});
