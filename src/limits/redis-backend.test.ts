import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { startTestRedis, type TestRedis } from '../../test/helpers/redis.js';
import { createLogger } from '../log.js';
import { LocalQuotaBackend } from './local-backend.js';
import { RedisLeaseBackend, RedisQuotaBackend } from './redis-backend.js';
import { connectRedis, whenReady } from './redis-client.js';

describe('RedisLeaseBackend and RedisQuotaBackend (real redis-server)', () => {
  let server: TestRedis;
  let redis: Redis;
  before(async () => {
    server = await startTestRedis();
    redis = connectRedis(server.url, { purpose: 'test', logger: createLogger({ level: 'silent' }) });
    assert.equal(await whenReady(redis, 5_000), true);
  });
  after(async () => {
    redis.disconnect();
    await server.stop();
  });

  test('a new bucket starts full, never grants more than it holds, and refills by elapsed time', async () => {
    const backend = new RedisLeaseBackend(redis);
    const ask = { bucket: 'refill', spec: { requests_per_second: 100, burst: 10 } };
    const first = performance.now();
    assert.deepEqual(await backend.lease([{ ...ask, want: 4 }]), [4]);
    const restAsked = performance.now(); // before Redis took the rest: the refill below starts after it
    const [rest] = await backend.lease([{ ...ask, want: 100 }]);
    const refill = ((performance.now() - first) / 1000) * ask.spec.requests_per_second;
    assert.ok(rest !== undefined && rest >= 6 && rest <= 6 + refill + 0.2, `the remaining 6 + ≤ ${refill}: ${rest}`);
    assert.ok(Number.isInteger(rest), 'whole tokens');
    let total = 0;
    while (total < 5 && performance.now() - restAsked < 5_000) {
      const [granted] = await backend.lease([{ ...ask, want: 5 - total }]);
      total += granted ?? 0;
    }
    const elapsed = performance.now() - restAsked;
    assert.equal(total, 5);
    // The bucket kept a fraction (< 1 token) after the rest: 5 more whole tokens take > 40 ms at 100/s
    // (less Redis TIME's millisecond).
    assert.ok(elapsed >= 39, `5 tokens at 100/s take over 40 ms: ${elapsed} ms`);
  });

  test('asks of one batch are answered in order, each bucket on its own', async () => {
    const backend = new RedisLeaseBackend(redis);
    const grants = await backend.lease([
      { bucket: 'batch-a', spec: { requests_per_second: 1, burst: 3 }, want: 5 },
      { bucket: 'batch-b', spec: { requests_per_second: 1, burst: 7 }, want: 2 },
      { bucket: 'batch-a', spec: { requests_per_second: 1, burst: 3 }, want: 5 },
    ]);
    assert.deepEqual(grants, [3, 2, 0], 'batch-a is empty the second time');
  });

  test('bucket names (which may be API keys) never reach Redis in clear; keys expire once full again', async () => {
    const backend = new RedisLeaseBackend(redis);
    const secret = 'sk_live_super_secret_client_key';
    await backend.lease([{ bucket: secret, spec: { requests_per_second: 2, burst: 4 }, want: 3 }]);
    const keys = await redis.keys('switchyard:*');
    assert.ok(keys.length > 0);
    assert.ok(
      keys.every((key) => !key.includes(secret) && !key.includes('refill')),
      keys.join(' '),
    );
    const [key] = keys.filter((k) => k.startsWith('switchyard:rl:'));
    assert.ok(key !== undefined);
    const ttls = await Promise.all(keys.filter((k) => k.startsWith('switchyard:rl:')).map((k) => redis.pttl(k)));
    // 3 of 4 tokens missing at 2/s: full again in 1.5 s, kept 1 s longer.
    assert.ok(
      ttls.some((ttl) => ttl > 2_000 && ttl <= 2_500),
      `a TTL of ≈ 2.5 s: ${ttls.join(', ')}`,
    );
    assert.ok(ttls.every((ttl) => ttl > 0));
  });

  test('the script is loaded again when Redis forgot it (SCRIPT FLUSH, a restart)', async () => {
    const backend = new RedisLeaseBackend(redis);
    await redis.script('FLUSH');
    assert.deepEqual(
      await backend.lease([{ bucket: 'flushed', spec: { requests_per_second: 1, burst: 2 }, want: 1 }]),
      [1],
    );
    assert.deepEqual(
      await new RedisQuotaBackend(redis).reserve([{ key: 'flushed', date: '2026-01-01', quota: 5, want: 2 }]),
      [{ granted: 2, left: 3 }],
    );
  });

  test('a daily quota is never granted beyond, per key and day; counters expire after two days', async () => {
    const backend = new RedisQuotaBackend(redis);
    const day = { key: 'key_1', date: '2026-11-24', quota: 10 };
    assert.deepEqual(
      await backend.reserve([
        { ...day, want: 4 },
        { ...day, want: 4 },
        { ...day, want: 4 },
      ]),
      [
        { granted: 4, left: 6 },
        { granted: 4, left: 2 },
        { granted: 2, left: 0 },
      ],
    );
    assert.deepEqual(await backend.reserve([{ ...day, want: 1 }]), [{ granted: 0, left: 0 }]);
    assert.deepEqual(
      await backend.reserve([{ ...day, date: '2026-11-25', want: 3 }]),
      [{ granted: 3, left: 7 }],
      'a new day',
    );
    assert.deepEqual(
      await backend.reserve([{ ...day, key: 'key_2', want: 3 }]),
      [{ granted: 3, left: 7 }],
      'another key',
    );
    assert.deepEqual(
      await backend.reserve([{ ...day, quota: 12, want: 5 }]),
      [{ granted: 2, left: 0 }],
      'a raised quota grants the difference',
    );
    const keys = await redis.keys('switchyard:quota:*');
    assert.ok(keys.every((key) => !key.includes('key_1')));
    const ttl = await redis.ttl(keys[0] as string);
    assert.ok(ttl > 172_000 && ttl <= 172_800, `two days: ${ttl}`);
  });

  test('a count Redis lacks starts from the seeds (the store), one below them is raised, none is lowered', async () => {
    const known = new Map([['seeded', 70]]);
    const seeds = { spent: (date: string, key: string) => (date === '2026-05-10' ? (known.get(key) ?? 0) : 0) };
    const backend = new RedisQuotaBackend(redis, seeds);
    const day = { key: 'seeded', date: '2026-05-10', quota: 100 };
    assert.deepEqual(await backend.reserve([{ ...day, want: 50 }]), [{ granted: 30, left: 0 }], '70 known spent');
    await redis.flushall(); // a restart without persistence
    assert.deepEqual(await backend.reserve([{ ...day, want: 50 }]), [{ granted: 30, left: 0 }], 'not a fresh day');
    known.set('seeded', 20); // behind Redis (reserved, not yet flushed): never lowers the count
    assert.deepEqual(await backend.reserve([{ ...day, want: 1 }]), [{ granted: 0, left: 0 }]);
    const ttl = await redis.ttl((await redis.keys('switchyard:quota:*'))[0] as string);
    assert.ok(ttl > 172_000 && ttl <= 172_800, `a seeded count expires as any other: ${ttl}`);
    assert.deepEqual(
      await new LocalQuotaBackend(seeds).reserve([
        { ...day, want: 50 },
        { ...day, date: '2026-05-11', want: 5 },
      ]),
      [
        { granted: 50, left: 30 },
        { granted: 5, left: 95 },
      ],
      'the in-process backend starts from the same seeds',
    );
  });
});
