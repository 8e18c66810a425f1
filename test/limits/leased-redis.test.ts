/**
 * Leased rate limits on a real redis-server (SPEC §11): two LeasedLimiters, as two instances, each with
 * its own connection, share one bucket; Redis killed mid-way → each fails open to local limits, logs it
 * once, shows it as a metric, and goes back to the global bucket when Redis returns. Real time, bounded.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { systemClock } from '../../src/clock.js';
import { SwitchyardError } from '../../src/errors/base.js';
import { LeasedLimiter } from '../../src/gateway/rpc/leased-limiter.js';
import { quotaExceeded } from '../../src/gateway/rpc/quota.js';
import { LeasedQuotaCounter, type QuotaFallback } from '../../src/gateway/rpc/quota-leased.js';
import type { RateSpec } from '../../src/gateway/rpc/rate-limit.js';
import { SharedLimitsStatus } from '../../src/gateway/rpc/shared-status.js';
import { RedisLeaseBackend, RedisQuotaBackend } from '../../src/limits/redis-backend.js';
import { connectRedis, whenReady } from '../../src/limits/redis-client.js';
import { createLogger } from '../../src/log.js';
import { MetricsRegistry } from '../../src/metrics/registry.js';
import { startTestRedis, type TestRedis } from '../helpers/redis.js';

/** The time of every quota spend: a fixed day, so a run across 00:00 UTC does not start a new count. */
const NOON = Date.parse('2026-05-10T12:00:00Z');

interface Instance {
  limiter: LeasedLimiter;
  quota: LeasedQuotaCounter;
  redis: Redis;
  lines: string[];
  metrics: MetricsRegistry;
}

async function instance(url: string): Promise<Instance> {
  const lines: string[] = [];
  const logger = createLogger({ level: 'info', write: (line) => lines.push(line) });
  const redis = connectRedis(url, { purpose: 'limits', logger });
  assert.equal(await whenReady(redis, 5_000), true);
  const metrics = new MetricsRegistry();
  const status = new SharedLimitsStatus({ backend: 'redis', clock: systemClock, logger, metrics });
  const local: QuotaFallback = {
    spend: (_key, dailyQuota, _cost, now) => {
      throw quotaExceeded(dailyQuota, now); // not reached while Redis answers
    },
    raise: () => {},
  };
  return {
    limiter: new LeasedLimiter({ backend: new RedisLeaseBackend(redis), status, clock: systemClock }),
    quota: new LeasedQuotaCounter({ backend: new RedisQuotaBackend(redis), status, fallback: local }),
    redis,
    lines,
    metrics,
  };
}

function admits(limiter: LeasedLimiter, bucket: string, spec: RateSpec): boolean {
  try {
    limiter.take(bucket, spec, 1);
    return true;
  } catch (err) {
    assert.ok(err instanceof SwitchyardError && err.code === 'RATE_LIMITED');
    return false;
  }
}

/** Sends `perSecond` calls per second for `ms`, round-robin over `limiters`; counts the admitted. */
async function hammer(
  limiters: readonly LeasedLimiter[],
  bucket: string,
  spec: RateSpec,
  perSecond: number,
  ms: number,
): Promise<{ admitted: number; sent: number; elapsedMs: number }> {
  const started = performance.now();
  let sent = 0;
  let admitted = 0;
  for (;;) {
    const elapsed = performance.now() - started;
    if (elapsed >= ms) break;
    const due = Math.floor((elapsed * perSecond) / 1000) + 1;
    for (; sent < due; sent += 1) {
      if (admits(limiters[sent % limiters.length] as LeasedLimiter, bucket, spec)) admitted += 1;
    }
    await new Promise((resolve) => setTimeout(resolve, 2)); // pacing (the rate), not synchronisation
  }
  return { admitted, sent, elapsedMs: performance.now() - started };
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('leased rate limits on Redis', () => {
  const servers: TestRedis[] = [];
  const instances: Instance[] = [];
  after(async () => {
    for (const i of instances) i.redis.disconnect();
    for (const s of servers) await s.stop();
  });

  test('two instances at 3× the limit for 5 s admit limit × t + burst within ±10 %', async (t) => {
    const server = await startTestRedis();
    servers.push(server);
    const a = await instance(server.url);
    const b = await instance(server.url);
    instances.push(a, b);
    const spec = { requests_per_second: 50, burst: 50 };
    const { admitted, sent, elapsedMs } = await hammer([a.limiter, b.limiter], '198.51.100.7', spec, 150, 5_000);
    const ideal = (50 * elapsedMs) / 1000 + 50;
    t.diagnostic(`admitted ${admitted} of ${sent} in ${Math.round(elapsedMs)} ms; ideal ${ideal.toFixed(1)}`);
    assert.ok(sent >= 700, `sent ${sent}`);
    assert.ok(
      admitted >= 0.9 * ideal && admitted <= 1.1 * ideal,
      `admitted ${admitted} of ${sent} in ${Math.round(elapsedMs)} ms; ideal ${ideal.toFixed(1)}`,
    );
    assert.ok(a.lines.every((line) => !line.includes('unreachable')));
  });

  test('two instances spend one key’s daily quota on Redis: never beyond it but for one call of credit each', async () => {
    const [a, b] = instances as [Instance, Instance];
    const quota = 300;
    let admitted = 0;
    const outcomes: Promise<void>[] = [];
    const settle = (err: unknown): void => {
      assert.ok(err instanceof SwitchyardError && err.code === 'KEY_QUOTA_EXCEEDED', String(err));
    };
    // 3 calls per instance per turn, never waiting for a round trip in between: the concurrency of a
    // busy gateway, where a reserve is always in flight.
    for (let i = 0; i < 150; i += 1) {
      for (const instance of [a, b]) {
        for (let j = 0; j < 3; j += 1) {
          try {
            const waited = instance.quota.admit('key_quota', quota, 1, NOON); // one day whenever the test runs
            if (waited === undefined) admitted += 1;
            else
              outcomes.push(
                waited.then(() => {
                  admitted += 1;
                }, settle),
              );
          } catch (err) {
            settle(err);
          }
        }
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(outcomes);
    // Under: chunks still held (≤ 2 × ⌈300/50⌉); over: the one call each instance may run on credit.
    assert.ok(admitted >= quota - 12 && admitted <= quota + 2, `admitted ${admitted} of quota ${quota}`);
  });

  test('Redis killed mid-way: fail open to local limits, logged once, metric; global again when it returns', async () => {
    const server = await startTestRedis();
    const one = await instance(server.url);
    instances.push(one);
    const spec = { requests_per_second: 20, burst: 20 };
    const before = await hammer([one.limiter], 'client', spec, 60, 1_000);
    assert.ok(before.admitted <= 20 + 20 * 1.2 + 5, `global bucket before the kill: ${before.admitted}`);

    await server.kill();
    // The next asks fail; from then on the process's own bucket (full: 20) decides.
    const during = await hammer([one.limiter], 'client', spec, 60, 1_500);
    assert.ok(during.admitted >= 20 + 20, `fail open: the local bucket admits its burst and rate (${during.admitted})`);
    assert.equal(one.lines.filter((line) => line.includes('shared limits unreachable')).length, 1, one.lines.join(''));
    assert.match(one.metrics.render(), /^switchyard_limits_backend_up\{backend="redis"\} 0$/m);
    assert.match(one.metrics.render(), /^switchyard_limits_fallback_total\{backend="redis"\} [1-9]\d*$/m);

    const back = await startTestRedis(server.port);
    servers.push(back);
    await until(() => {
      admits(one.limiter, 'client', spec); // calls carry the probes (one per second)
      return one.lines.some((line) => line.includes('reachable again'));
    }, 'the return to global limits');
    assert.equal(one.lines.filter((line) => line.includes('shared limits unreachable')).length, 1);
    assert.match(one.metrics.render(), /^switchyard_limits_backend_up\{backend="redis"\} 1$/m);
    assert.ok((await one.redis.keys('switchyard:rl:*')).length > 0, 'the bucket lives in Redis again');
  });
});
