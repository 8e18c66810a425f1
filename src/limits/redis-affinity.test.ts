import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { startTestRedis, type TestRedis } from '../../test/helpers/redis.js';
import { waitFor } from '../../test/http1/servers.js';
import { ManualClock } from '../clock.js';
import type { AffinityEntry } from '../gateway/upstream/affinity-share.js';
import { WriteAffinity } from '../gateway/upstream/write-affinity.js';
import { createLogger } from '../log.js';
import { AFFINITY_CHANNEL, affinityEntry, RedisAffinityShare } from './redis-affinity.js';
import { connectRedis, subscriberOf, whenReady } from './redis-client.js';

const logger = createLogger({ level: 'silent' });

const write: AffinityEntry = { kind: 'write', network: 'sepolia', client: 'k1', poolId: 'p', origin: 'a', until: 1e12 };
const filter: AffinityEntry = { kind: 'filter', network: 'sepolia', id: '0x1', pool: 'p', origin: 'b', until: 1e12 };

describe('RedisAffinityShare', () => {
  let server: TestRedis | undefined;
  const clients: Redis[] = [];
  after(async () => {
    for (const client of clients) client.disconnect();
    await server?.stop();
  });

  /** An instance's share, on a connection of its own. */
  async function shareOn(url: string): Promise<RedisAffinityShare> {
    const redis = connectRedis(url, { purpose: 'test', logger });
    assert.equal(await whenReady(redis, 5_000), true);
    clients.push(redis);
    const subscriber = subscriberOf(redis);
    clients.push(subscriber);
    return new RedisAffinityShare(redis, subscriber, logger);
  }

  test('an entry published by one instance reaches every instance, itself included; a message that is not an entry is ignored', async () => {
    server = await startTestRedis();
    const a = await shareOn(server.url);
    const b = await shareOn(server.url);
    const heard: string[] = [];
    a.subscribe((entry) => heard.push(`a:${entry.kind}`));
    b.subscribe((entry) => heard.push(`b:${entry.kind}:${JSON.stringify(entry)}`));
    await Promise.all([a.ready(), b.ready()]);
    await clients[0]?.publish(AFFINITY_CHANNEL, '{"kind":"write","network":"sepolia"}');
    a.publish(write);
    b.publish(filter);
    await waitFor(() => heard.length === 4, 'both entries at both instances', 10_000);
    assert.deepEqual(heard.sort(), [
      'a:filter',
      'a:write',
      `b:filter:${JSON.stringify(filter)}`,
      `b:write:${JSON.stringify(write)}`,
    ]);
  });

  test("two one-process instances: a client's write recorded by one sends its reads to that origin in the other", async () => {
    assert.ok(server !== undefined);
    const clock = new ManualClock(new Date(Date.now()).toISOString());
    const one = await shareOn(server.url);
    const two = await shareOn(server.url);
    const writesOne = new WriteAffinity(clock, 60_000, { share: one });
    const writesTwo = new WriteAffinity(clock, 60_000, { share: two });
    await Promise.all([one.ready(), two.ready()]);
    writesOne.record('key-id-1', 'sepolia', { poolId: 'p', origin: 'b' });
    await waitFor(() => writesTwo.homeOf('key-id-1', 'sepolia') !== undefined, 'the write at the other instance');
    assert.equal(writesTwo.homeOf('key-id-1', 'sepolia')?.origin, 'b');
  });

  test('affinityEntry takes only whole entries of either kind', () => {
    assert.deepEqual(affinityEntry(JSON.stringify(write)), write);
    assert.deepEqual(affinityEntry(JSON.stringify({ ...filter, extra: 1 })), filter);
    for (const bad of [
      'not json',
      'null',
      '[]',
      JSON.stringify({ ...write, until: 'soon' }),
      JSON.stringify({ ...write, client: 7 }),
      JSON.stringify({ ...filter, id: undefined }),
      JSON.stringify({ ...write, kind: 'other' }),
      JSON.stringify({ ...filter, until: null }),
    ]) {
      assert.equal(affinityEntry(bad), undefined, bad);
    }
  });
});
