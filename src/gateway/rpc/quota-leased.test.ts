import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../clock.js';
import { SwitchyardError } from '../../errors/base.js';
import { LocalQuotaBackend } from '../../limits/local-backend.js';
import { createLogger } from '../../log.js';
import { MetricsRegistry } from '../../metrics/registry.js';
import { utcDay } from '../../model/gateway-keys.js';
import { LocalQuotaCounter, quotaExceeded } from './quota.js';
import type { QuotaAsk, QuotaBackend, QuotaGrant } from './quota-backend.js';
import { LeasedQuotaCounter, quotaChunk } from './quota-leased.js';
import { SharedLimitsStatus } from './shared-status.js';

const NOON = '2026-11-24T12:00:00Z';

async function answered(): Promise<void> {
  for (let i = 0; i < 3; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

/** The outcome of `admit`: admitted, refused (KEY_QUOTA_EXCEEDED), or a promise of one. */
function admitted(counter: LeasedQuotaCounter, key: string, quota: number, cost: number, now: number) {
  const settle = (err: unknown): false => {
    assert.ok(err instanceof SwitchyardError && err.code === 'KEY_QUOTA_EXCEEDED', String(err));
    return false;
  };
  try {
    const waited = counter.admit(key, quota, cost, now);
    return waited === undefined ? true : waited.then(() => true, settle);
  } catch (err) {
    return settle(err);
  }
}

/** A backend that can be switched off (it rejects, as an unreachable Redis does). */
class SwitchableQuota implements QuotaBackend {
  up = true;
  asks: QuotaAsk[][] = [];
  constructor(readonly inner: QuotaBackend) {}
  async reserve(asks: readonly QuotaAsk[]): Promise<QuotaGrant[]> {
    this.asks.push([...asks]);
    if (!this.up) throw new Error('connect ECONNREFUSED');
    return this.inner.reserve(asks);
  }
}

function counterOn(
  backend: QuotaBackend,
  clock: ManualClock,
  options: { lines?: string[]; fallback?: LocalQuotaCounter; metrics?: MetricsRegistry } = {},
) {
  const logger = createLogger({ level: 'info', write: (line) => options.lines?.push(line) });
  const status = new SharedLimitsStatus({ backend: 'test', clock, logger, metrics: options.metrics });
  return new LeasedQuotaCounter({ backend, status, fallback: options.fallback ?? new LocalQuotaCounter() });
}

/** The SPEC §20 bound on calls admitted beyond a daily quota, n processes, batches of at most `batch` calls. */
function overrunBound(quota: number, processes: number, batch: number): number {
  return Math.min(processes * batch, Math.max(0.1 * quota, 100));
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
  test('concurrent singles and batches through n processes stay within the SPEC §20 bound', async () => {
    // A seeded walk: each turn, every process gets a few requests of 1–10 calls before any reserve is
    // answered (the concurrency that overran: 135 of 100 with 500 singles, 230 with 60 batches of 10).
    let seed = 7;
    const random = (below: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % below;
    };
    for (const [quota, processes] of [
      [100, 2],
      [100, 4],
      [1_000, 2],
      [1_000, 3],
      [5_000, 4],
    ] as const) {
      const clock = new ManualClock(NOON);
      const metrics = new MetricsRegistry();
      const backend = new LocalQuotaBackend();
      const counters = Array.from({ length: processes }, () => counterOn(backend, clock, { metrics }));
      let admittedCalls = 0;
      let largest = 0;
      const waits: Promise<void>[] = [];
      for (let turn = 0; turn < 400; turn += 1) {
        for (const counter of counters) {
          for (let i = random(6); i > 0; i -= 1) {
            const cost = random(3) === 0 ? 1 + random(10) : 1;
            largest = Math.max(largest, cost);
            const outcome = admitted(counter, 'key', quota, cost, clock.now());
            if (outcome === true) admittedCalls += cost;
            else if (outcome !== false)
              waits.push(
                outcome.then((ok) => {
                  if (ok) admittedCalls += cost;
                }),
              );
          }
        }
        await answered();
      }
      await Promise.all(waits);
      const over = Math.max(0, admittedCalls - quota);
      const what = `quota ${quota}, ${processes} processes: admitted ${admittedCalls}`;
      assert.ok(admittedCalls <= quota + overrunBound(quota, processes, largest), what);
      assert.ok(admittedCalls >= quota - processes * Math.ceil(quota / 50) - largest, what);
      const counted = Number(
        /switchyard_limits_quota_overrun_total\{backend="test"\} (\d+)/.exec(metrics.render())?.[1],
      );
      assert.equal(Number.isNaN(counted) ? 0 : counted, over, `${what}: every call beyond the quota is counted`);
    }
  });

  test('a key’s first call in a process runs on credit; the next ones wait for the reserve and are admitted by it', async () => {
    const clock = new ManualClock(NOON);
    const counter = counterOn(new LocalQuotaBackend(), clock);
    assert.equal(counter.admit('k', 100, 1, clock.now()), undefined, 'no wait for the first call');
    const second = counter.admit('k', 100, 1, clock.now());
    const batch = counter.admit('k', 100, 10, clock.now());
    assert.ok(second instanceof Promise && batch instanceof Promise, 'beyond the credit line: wait');
    await Promise.all([second, batch]);
    // Reserved for them: what is held now serves the next calls without a wait.
    assert.equal(counter.admit('k', 100, 1, clock.now()), undefined);
  });

  test('the grant that uses up the day admits the waiting calls it covers and refuses the rest', async () => {
    const clock = new ManualClock(NOON);
    const backend = new LocalQuotaBackend();
    backend.reserveNow([{ key: 'k', date: '2026-11-24', quota: 10, want: 6 }]); // another process
    const counter = counterOn(backend, clock);
    const outcomes = [1, 2, 3, 1].map((cost) => admitted(counter, 'k', 10, cost, clock.now()));
    assert.deepEqual(await Promise.all(outcomes), [true, true, false, true], '1 on credit, then 2 and 1 fit in 4');
    assert.equal(admitted(counter, 'k', 10, 1, clock.now()), false, 'used up: refused at once');
  });

  test('a request costing more than the whole quota is refused at once, never on credit', () => {
    const clock = new ManualClock(NOON);
    const backend = new SwitchableQuota(new LocalQuotaBackend());
    const counter = counterOn(backend, clock);
    assert.equal(admitted(counter, 'k', 5, 6, clock.now()), false);
    assert.equal(backend.asks.length, 0);
  });

  test('credit the backend could not cover is counted as overrun', async () => {
    const clock = new ManualClock(NOON);
    const metrics = new MetricsRegistry();
    const backend = new LocalQuotaBackend();
    const counter = counterOn(backend, clock, { metrics });
    assert.equal(admitted(counter, 'k', 10, 1, clock.now()), true, 'on credit');
    // Another process takes the whole day while this reserve is in flight.
    backend.reserveNow([{ key: 'k', date: '2026-11-24', quota: 10, want: 10 }]);
    await answered();
    assert.equal(admitted(counter, 'k', 10, 1, clock.now()), false);
    assert.match(metrics.render(), /^switchyard_limits_quota_overrun_total\{backend="test"\} 1$/m);
  });

  test('`spend`, which cannot wait, refuses as RATE_LIMITED (Retry-After: 1) where `admit` would wait', async () => {
    const clock = new ManualClock(NOON);
    const counter = counterOn(new LocalQuotaBackend(), clock);
    counter.spend('k', 100, 1, clock.now()); // on credit
    assert.throws(
      () => counter.spend('k', 100, 5, clock.now()),
      (err: SwitchyardError) => err.code === 'RATE_LIMITED' && err.headers?.['retry-after'] === '1',
    );
    await answered();
    counter.spend('k', 100, 5, clock.now()); // the reserve it started covers it
  });

  test('a new UTC day starts afresh; a raised quota grants the difference', async () => {
    const clock = new ManualClock('2026-11-24T23:00:00Z');
    const counter = counterOn(new LocalQuotaBackend(), clock);
    const run = async (quota: number): Promise<number> => {
      let count = 0;
      for (let i = 0; i < 20; i += 1) {
        if (await admitted(counter, 'k', quota, 1, clock.now())) count += 1;
        await answered();
      }
      return count;
    };
    assert.equal(await run(10), 10);
    assert.equal(await run(15), 5, 'raised from 10 to 15');
    clock.set('2026-11-25T00:00:00Z');
    assert.equal(await run(15), 15);
    assert.equal(quotaChunk(1_000), 1);
    assert.equal(quotaChunk(1_001), 2);
  });

  test('an unreachable backend: held calls first, then the fallback, which admits at most what was left', async () => {
    const clock = new ManualClock(NOON);
    const inner = new LocalQuotaBackend();
    const backend = new SwitchableQuota(inner);
    const lines: string[] = [];
    const fallback = new LocalQuotaCounter();
    const counter = counterOn(backend, clock, { lines, fallback });
    inner.reserveNow([{ key: 'k', date: '2026-11-24', quota: 100, want: 90 }]); // other processes
    assert.equal(await admitted(counter, 'k', 100, 1, clock.now()), true);
    await answered(); // this process now holds the rest of its chunk
    backend.up = false;
    const waiting = admitted(counter, 'k', 100, 50, clock.now()); // beyond held: waits; its reserve fails
    assert.ok(waiting instanceof Promise);
    assert.equal(await waiting, false, 'the fallback knows only what was left');
    let count = 0;
    for (let i = 0; i < 30; i += 1) if (await admitted(counter, 'k', 100, 1, clock.now())) count += 1;
    assert.equal(count, 100 - 90 - 1, 'during the outage: what was left, never a fresh quota');
    assert.equal(lines.filter((line) => line.includes('unreachable') && line.includes('"fails":"open"')).length, 1);
  });
});
