import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../clock.js';
import { SwitchyardError } from '../../errors/base.js';
import { LocalQuotaBackend } from '../../limits/local-backend.js';
import { createLogger } from '../../log.js';
import { MetricsRegistry } from '../../metrics/registry.js';
import { utcDay } from '../../model/gateway-keys.js';
import { type QuotaCounter, quotaExceeded } from './quota.js';
import type { QuotaAsk, QuotaBackend, QuotaGrant } from './quota-backend.js';
import { LeasedQuotaCounter, quotaChunk } from './quota-leased.js';
import { SharedLimitsStatus } from './shared-status.js';

async function answered(): Promise<void> {
  for (let i = 0; i < 3; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

function admits(spend: () => void): boolean {
  try {
    spend();
    return true;
  } catch (err) {
    assert.ok(err instanceof SwitchyardError && err.code === 'KEY_QUOTA_EXCEEDED', String(err));
    return false;
  }
}

/** This process's own count, as the fallback during an outage. */
class CountingFallback implements QuotaCounter {
  spent = 0;
  spend(_keyId: string, dailyQuota: number, cost: number, now: number): void {
    if (this.spent + cost > dailyQuota) throw quotaExceeded(dailyQuota, now);
    this.spent += cost;
  }
}

class SwitchableQuota implements QuotaBackend {
  up = true;
  constructor(readonly inner: QuotaBackend) {}
  async reserve(asks: readonly QuotaAsk[]): Promise<QuotaGrant[]> {
    if (!this.up) throw new Error('connect ECONNREFUSED');
    return this.inner.reserve(asks);
  }
}

function counterOn(backend: QuotaBackend, clock: ManualClock, lines: string[] = [], fallback = new CountingFallback()) {
  const logger = createLogger({ level: 'info', write: (line) => lines.push(line) });
  const status = new SharedLimitsStatus({ backend: 'test', clock, logger });
  return new LeasedQuotaCounter({ backend, status, fallback });
}

describe('quota refusal', () => {
  test('KEY_QUOTA_EXCEEDED is 429 with Retry-After in whole seconds until 00:00 UTC', () => {
    const err = quotaExceeded(100, Date.parse('2026-11-24T23:59:00.500Z'));
    assert.equal(err.code, 'KEY_QUOTA_EXCEEDED');
    assert.equal(err.headers?.['retry-after'], '60');
    assert.equal(quotaExceeded(1, Date.parse('2026-11-24T00:00:00Z')).headers?.['retry-after'], '86400');
    assert.equal(utcDay(Date.parse('2026-11-24T23:59:59.999Z')), '2026-11-24');
  });
});

describe('LeasedQuotaCounter', () => {
  test('two processes spend one key’s quota: admitted ≤ quota + credit, ≥ quota − held chunks', async () => {
    const clock = new ManualClock('2026-11-24T12:00:00Z');
    const backend = new LocalQuotaBackend();
    const a = counterOn(backend, clock);
    const b = counterOn(backend, clock);
    let admitted = 0;
    for (let i = 0; i < 1500; i += 1) {
      if (admits(() => (i % 2 === 0 ? a : b).spend('key_1', 1000, 1, clock.now()))) admitted += 1;
      if (i % 5 === 4) await answered();
    }
    // Credit of one round trip (≤ 5 calls here) per process over; unspent chunks (≤ 2 × 20) under.
    assert.ok(admitted >= 1000 - 2 * Math.ceil(1000 / 50) && admitted <= 1000 + 10, `admitted ${admitted}`);
    assert.equal(quotaChunk(1000), 1);
    await answered();
    assert.throws(
      () => a.spend('key_1', 1000, 1, clock.now()),
      (err: SwitchyardError) => err.code === 'KEY_QUOTA_EXCEEDED' && err.headers?.['retry-after'] === '43200',
    );
  });

  test('the grant that uses up the day ends credit at once: two processes admit exactly the quota', async () => {
    const clock = new ManualClock('2026-11-24T12:00:00Z');
    const backend = new LocalQuotaBackend();
    const a = counterOn(backend, clock);
    const b = counterOn(backend, clock);
    let admitted = 0;
    // Each reserve answered before the next call: no round trip is in flight, so nothing runs on credit
    // past the quota — a process learns the day is used up from the grant that used it up.
    for (let i = 0; i < 60; i += 1) {
      if (admits(() => (i % 2 === 0 ? a : b).spend('key_1', 30, 1, clock.now()))) admitted += 1;
      await answered();
    }
    assert.equal(admitted, 30);
  });

  test('calls admitted on credit while the reserve that used up the day was in flight are counted as overrun', async () => {
    const clock = new ManualClock('2026-11-24T12:00:00Z');
    const metrics = new MetricsRegistry();
    const logger = createLogger({ level: 'info', write: () => {} });
    const status = new SharedLimitsStatus({ backend: 'test', clock, logger, metrics });
    const backend = new LocalQuotaBackend();
    const counter = new LeasedQuotaCounter({ backend, status, fallback: new CountingFallback() });
    // Another process took 9 of the key's 10 calls.
    backend.reserveNow([{ key: 'k', date: '2026-11-24', quota: 10, want: 9 }]);
    // Three calls in one turn: the first asks (on credit), the next two run on credit behind it.
    for (let i = 0; i < 3; i += 1) assert.ok(admits(() => counter.spend('k', 10, 1, clock.now())));
    await answered();
    assert.equal(
      admits(() => counter.spend('k', 10, 1, clock.now())),
      false,
      'the day is used up',
    );
    assert.match(metrics.render(), /^switchyard_limits_quota_overrun_total\{backend="test"\} 2$/m);
  });

  test('a new UTC day starts afresh; a raised quota grants the difference', async () => {
    const clock = new ManualClock('2026-11-24T23:00:00Z');
    const counter = counterOn(new LocalQuotaBackend(), clock);
    let admitted = 0;
    for (let i = 0; i < 20; i += 1) {
      if (admits(() => counter.spend('k', 10, 1, clock.now()))) admitted += 1;
      await answered();
    }
    assert.equal(admitted, 10);
    admitted = 0;
    for (let i = 0; i < 20; i += 1) {
      if (admits(() => counter.spend('k', 15, 1, clock.now()))) admitted += 1;
      await answered();
    }
    assert.equal(admitted, 5, 'raised from 10 to 15');
    clock.set('2026-11-25T00:00:00Z');
    admitted = 0;
    for (let i = 0; i < 20; i += 1) {
      if (admits(() => counter.spend('k', 15, 1, clock.now()))) admitted += 1;
      await answered();
    }
    assert.equal(admitted, 15);
  });

  test('a batch larger than what is held runs on credit instead of being refused', async () => {
    const clock = new ManualClock('2026-11-24T12:00:00Z');
    const counter = counterOn(new LocalQuotaBackend(), clock);
    assert.equal(
      admits(() => counter.spend('k', 100, 30, clock.now())),
      true,
    );
    await answered();
    assert.equal(
      admits(() => counter.spend('k', 100, 70, clock.now())),
      true,
    );
    await answered();
    assert.equal(
      admits(() => counter.spend('k', 100, 1, clock.now())),
      false,
    );
  });

  test('an unreachable backend: this process’s own counter decides, logged once', async () => {
    const clock = new ManualClock('2026-11-24T12:00:00Z');
    const backend = new SwitchableQuota(new LocalQuotaBackend());
    const lines: string[] = [];
    const fallback = new CountingFallback();
    const counter = counterOn(backend, clock, lines, fallback);
    backend.up = false;
    counter.spend('k', 5, 1, clock.now()); // on credit; its reserve fails
    await answered();
    let admitted = 0;
    for (let i = 0; i < 10; i += 1) if (admits(() => counter.spend('k', 5, 1, clock.now()))) admitted += 1;
    assert.equal(admitted, 5);
    assert.equal(fallback.spent, 5);
    assert.equal(lines.filter((line) => line.includes('unreachable')).length, 1);
  });
});
