import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../clock.js';
import { SwitchyardError } from '../../errors/base.js';
import { LocalLeaseBackend } from '../../limits/local-backend.js';
import { createLogger } from '../../log.js';
import { MetricsRegistry } from '../../metrics/registry.js';
import type { LeaseAsk, LeaseBackend } from './lease-backend.js';
import { LeasedLimiter, leaseSize } from './leased-limiter.js';
import { rateSpec } from './rate-limit.js';
import { PROBE_INTERVAL_MS, SharedLimitsStatus } from './shared-status.js';

/** Lets queued asks go out and their answers come back (two event-loop turns). */
async function answered(): Promise<void> {
  for (let i = 0; i < 3; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

function admits(take: () => void): boolean {
  try {
    take();
    return true;
  } catch (err) {
    assert.ok(err instanceof SwitchyardError && err.code === 'RATE_LIMITED', String(err));
    return false;
  }
}

/** A backend that can be switched off (rejects, as an unreachable Redis does) and counts its asks. */
class SwitchableBackend implements LeaseBackend {
  up = true;
  asks: LeaseAsk[] = [];
  constructor(readonly inner: LeaseBackend) {}
  async lease(asks: readonly LeaseAsk[]): Promise<number[]> {
    this.asks.push(...asks);
    if (!this.up) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
    return this.inner.lease(asks);
  }
}

function limiterOn(backend: LeaseBackend, clock: ManualClock, lines: string[] = [], metrics?: MetricsRegistry) {
  const logger = createLogger({ level: 'info', write: (line) => lines.push(line) });
  const status = new SharedLimitsStatus({ backend: 'test', clock, logger, metrics });
  return new LeasedLimiter({ backend, status, clock });
}

describe('LeasedLimiter', () => {
  test('lease size is 50 ms of the rate, at least 1 token, at most the burst', () => {
    assert.equal(leaseSize(rateSpec({ requests_per_second: 1000 })), 50);
    assert.equal(leaseSize(rateSpec({ requests_per_second: 50 })), 2.5);
    assert.equal(leaseSize(rateSpec({ requests_per_second: 2 })), 1);
    assert.equal(leaseSize({ requests_per_second: 1000, burst: 10 }), 10);
  });

  test('two processes at 3× the limit for 10 s admit limit × 10 s + burst within the documented bound', async () => {
    const clock = new ManualClock(0);
    const backend = new LocalLeaseBackend(clock);
    const a = limiterOn(backend, clock);
    const b = limiterOn(backend, clock);
    const spec = rateSpec({ requests_per_second: 50, burst: 50 });
    let admitted = 0;
    // 150 calls per second, alternating between the processes, one every 6⅔ ms; asks answered each ms.
    for (let ms = 0, call = 0; ms < 10_000; ms += 1) {
      while ((call * 1000) / 150 <= ms) {
        const limiter = call % 2 === 0 ? a : b;
        if (admits(() => limiter.take('client', spec, 1))) admitted += 1;
        call += 1;
      }
      clock.advance(1);
      await answered();
    }
    const ideal = 50 * 10 + 50;
    // Bound of the header: n·max(L, c) held + n·P provisional = 2·2.5 + 2·2.5 = 10.
    assert.ok(Math.abs(admitted - ideal) <= 10, `admitted ${admitted}, ideal ${ideal}`);
  });

  test("a new bucket's first call is admitted before any answer, and the backend is repaid", async () => {
    const clock = new ManualClock(0);
    const backend = new LocalLeaseBackend(clock);
    const spec = { requests_per_second: 10, burst: 4 };
    // Another process empties the global bucket.
    assert.deepEqual(await backend.lease([{ bucket: 'c', spec, want: 4 }]), [4]);
    const limiter = limiterOn(backend, clock);
    assert.equal(
      admits(() => limiter.take('c', spec, 1)),
      true,
      'provisional allowance (L = 1)',
    );
    assert.equal(
      admits(() => limiter.take('c', spec, 1)),
      false,
    );
    await answered();
    // The bucket is empty: the debt is still owed, so nothing is admitted until it refills.
    assert.equal(
      admits(() => limiter.take('c', spec, 1)),
      false,
    );
    clock.advance(100); // 1 token refilled: repays the provisional one
    await answered();
    assert.equal(
      admits(() => limiter.take('c', spec, 1)),
      false,
    );
    await answered();
    clock.advance(100);
    await answered();
    assert.equal(
      admits(() => limiter.take('c', spec, 1)),
      false,
    ); // asks the refilled token
    await answered();
    assert.equal(
      admits(() => limiter.take('c', spec, 1)),
      true,
    );
  });

  test('a call costing more than a lease is covered by the next ask; one over the burst is refused whole', async () => {
    const clock = new ManualClock(0);
    const limiter = limiterOn(new LocalLeaseBackend(clock), clock);
    const spec = { requests_per_second: 10, burst: 20 };
    assert.equal(
      admits(() => limiter.take('b', spec, 1)),
      true,
    );
    await answered();
    assert.equal(
      admits(() => limiter.take('b', spec, 10)),
      false,
    );
    await answered();
    assert.equal(
      admits(() => limiter.take('b', spec, 10)),
      true,
    );
    assert.throws(
      () => limiter.take('b', spec, 21),
      (err: SwitchyardError) => err.code === 'RATE_LIMITED' && /at most 20 at once/.test(err.message),
    );
  });

  test('buckets of different specs are leased apart', async () => {
    const clock = new ManualClock(0);
    const limiter = limiterOn(new LocalLeaseBackend(clock), clock);
    const small = { requests_per_second: 1, burst: 1 };
    const large = { requests_per_second: 100, burst: 10 };
    let small_ = 0;
    let large_ = 0;
    for (let i = 0; i < 30; i += 1) {
      if (admits(() => limiter.take('small', small, 1))) small_ += 1;
      if (admits(() => limiter.take('large', large, 1))) large_ += 1;
      await answered();
    }
    assert.equal(small_, 1);
    assert.equal(large_, 10);
  });

  test('an unreachable backend: fail open to local limits, logged once, shown; global again on return', async () => {
    const clock = new ManualClock(0);
    const backend = new SwitchableBackend(new LocalLeaseBackend(clock));
    const lines: string[] = [];
    const metrics = new MetricsRegistry();
    const limiter = limiterOn(backend, clock, lines, metrics);
    const spec = { requests_per_second: 10, burst: 5 };
    backend.up = false;
    assert.equal(
      admits(() => limiter.take('x', spec, 1)),
      true,
    ); // provisional; its ask fails
    await answered();
    assert.match(metrics.render(), /^switchyard_limits_backend_up\{backend="test"\} 0$/m);
    // Local bucket (burst 5) decides: 5 admitted, then refused — never refused for the outage itself.
    let admitted = 0;
    for (let i = 0; i < 8; i += 1) if (admits(() => limiter.take('x', spec, 1))) admitted += 1;
    assert.equal(admitted, 5);
    for (let i = 0; i < 5; i += 1) {
      clock.advance(PROBE_INTERVAL_MS);
      limiter.take('y', spec, 1);
      await answered();
    }
    const warnings = lines.filter((line) => line.includes('shared limits unreachable'));
    assert.equal(warnings.length, 1, lines.join(''));
    assert.match(warnings[0] as string, /ECONNREFUSED/);
    // 8 calls + 5 probing calls decided locally (the first call was the provisional allowance).
    assert.match(metrics.render(), /^switchyard_limits_fallback_total\{backend="test"\} 13$/m);
    const probes = backend.asks.length;
    assert.ok(probes >= 5 && probes <= 7, `one probe per second while down (${probes} asks)`);

    backend.up = true;
    clock.advance(PROBE_INTERVAL_MS);
    limiter.take('y', spec, 1); // the probe
    await answered();
    assert.equal(lines.filter((line) => line.includes('reachable again')).length, 1);
    assert.match(metrics.render(), /^switchyard_limits_backend_up\{backend="test"\} 1$/m);
    const asksBefore = backend.asks.length;
    limiter.take('z', spec, 1);
    await answered();
    assert.equal(backend.asks.length, asksBefore + 1, 'leased from the backend again');
  });
});
