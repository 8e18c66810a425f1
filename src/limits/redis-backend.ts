/**
 * The global buckets and daily quotas on Redis (`redis_url`, SPEC §11), shared by every instance
 * that names the same Redis. One round trip per batch of asks, each batch one Lua script, so a grant
 * is atomic across instances:
 * - lease: the bucket math of bucket.ts on a hash {tokens, at} per bucket — refill by the time elapsed
 *   since `at` by Redis's own clock (TIME, so instances' clocks never matter), grant min(want, whole
 *   tokens held) — the fraction stays in the bucket —
 *   PEXPIRE when it would be full again (+1 s), after which a missing key means "full";
 * - quota: a counter per key and UTC day; grant min(want, quota − used) and add it (never beyond the
 *   quota), EXPIRE 2 days; the reply pairs each grant with the calls left. A counter below what the
 *   asking process knows was spent (its `QuotaSeeds`: the store's usage) is raised to it first — a
 *   missing counter (Redis restarted, or evicted it) starts from the store, not from zero, and calls
 *   admitted locally during an outage count once flushed.
 * Key names are `switchyard:rl:<sha256 of the bucket>` and `switchyard:quota:<date>:<sha256 of the
 * key>`: bucket names may be API keys, which must not reach Redis in clear. A single Redis node (or
 * one behind Sentinel); a batch spans many keys, so Redis Cluster is not supported.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { LeaseAsk, LeaseBackend } from '../gateway/rpc/lease-backend.js';
import type { QuotaAsk, QuotaBackend, QuotaGrant, QuotaSeeds } from '../gateway/rpc/quota-backend.js';

/** Seconds a day's quota counter outlives its day (asks may straddle midnight). */
const QUOTA_TTL_S = 2 * 86_400;

const LEASE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[3 * i - 2])
  local burst = tonumber(ARGV[3 * i - 1])
  local want = tonumber(ARGV[3 * i])
  local tokens = burst
  local s = redis.call('HMGET', key, 'tokens', 'at')
  if s[1] and s[2] then
    tokens = math.min(burst, tonumber(s[1]) + math.max(0, now - tonumber(s[2])) * rate / 1000)
  end
  local granted = math.max(0, math.min(want, math.floor(tokens)))
  tokens = tokens - granted
  redis.call('HSET', key, 'tokens', string.format('%.17g', tokens), 'at', string.format('%d', now))
  redis.call('PEXPIRE', key, math.ceil((burst - tokens) / rate * 1000) + 1000)
  out[i] = tostring(granted)
end
return out
`;

const QUOTA_LUA = `
local out = {}
for i, key in ipairs(KEYS) do
  local quota = tonumber(ARGV[3 * i - 2])
  local want = tonumber(ARGV[3 * i - 1])
  local seed = tonumber(ARGV[3 * i])
  local used = tonumber(redis.call('GET', key) or '0')
  if seed > used then
    redis.call('SET', key, string.format('%d', seed), 'EX', ${QUOTA_TTL_S})
    used = seed
  end
  local granted = math.max(0, math.min(want, quota - used))
  if granted > 0 then
    redis.call('INCRBY', key, granted)
    redis.call('EXPIRE', key, ${QUOTA_TTL_S})
  end
  out[2 * i - 1] = tostring(granted)
  out[2 * i] = tostring(math.max(0, quota - used - granted))
end
return out
`;

/** A Lua script run by its SHA1 (EVALSHA), loaded with EVAL the first time a server does not know it. */
class LuaScript {
  readonly #source: string;
  readonly #sha: string;

  constructor(source: string) {
    this.#source = source;
    this.#sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.#sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return redis.eval(this.#source, keys.length, ...keys, ...args);
    }
  }
}

const leaseScript = new LuaScript(LEASE_LUA);
const quotaScript = new LuaScript(QUOTA_LUA);

function digest(name: string): string {
  return createHash('sha256').update(name).digest('hex').slice(0, 32);
}

function numbers(reply: unknown, count: number): number[] {
  if (!Array.isArray(reply) || reply.length !== count) throw new Error('unexpected reply from the limits script');
  return reply.map((value) => Math.max(0, Number(value) || 0));
}

export class RedisLeaseBackend implements LeaseBackend {
  readonly #redis: Redis;

  constructor(redis: Redis) {
    this.#redis = redis;
  }

  async lease(asks: readonly LeaseAsk[]): Promise<number[]> {
    if (asks.length === 0) return [];
    const keys = asks.map((ask) => `switchyard:rl:${digest(ask.bucket)}`);
    const args = asks.flatMap((ask) => [ask.spec.requests_per_second, ask.spec.burst, Math.floor(ask.want)]);
    return numbers(await leaseScript.run(this.#redis, keys, args), asks.length);
  }
}

export class RedisQuotaBackend implements QuotaBackend {
  readonly #redis: Redis;
  readonly #seeds: QuotaSeeds | undefined;

  /** `seeds`: what the store and this process know each key spent (a count is raised to them, never lowered). */
  constructor(redis: Redis, seeds?: QuotaSeeds) {
    this.#redis = redis;
    this.#seeds = seeds;
  }

  async reserve(asks: readonly QuotaAsk[]): Promise<QuotaGrant[]> {
    if (asks.length === 0) return [];
    const keys = asks.map((ask) => `switchyard:quota:${ask.date}:${digest(ask.key)}`);
    const args = asks.flatMap((ask) => [
      ask.quota,
      Math.floor(ask.want),
      Math.floor(this.#seeds?.spent(ask.date, ask.key) ?? 0),
    ]);
    const reply = numbers(await quotaScript.run(this.#redis, keys, args), 2 * asks.length);
    return asks.map((_, i) => ({ granted: reply[2 * i] ?? 0, left: reply[2 * i + 1] ?? 0 }));
  }
}
