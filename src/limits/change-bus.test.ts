import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { startTestRedis, type TestRedis } from '../../test/helpers/redis.js';
import { createLogger } from '../log.js';
import { LocalChangeBus, RedisChangeBus } from './change-bus.js';
import { connectRedis, subscriberOf, whenReady } from './redis-client.js';

const logger = createLogger({ level: 'silent' });

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('ChangeBus', () => {
  const servers: TestRedis[] = [];
  const clients: Redis[] = [];
  after(async () => {
    for (const client of clients) client.disconnect();
    for (const server of servers) await server.stop();
  });

  async function busOn(url: string): Promise<RedisChangeBus> {
    const redis = connectRedis(url, { purpose: 'test', logger });
    clients.push(redis);
    assert.equal(await whenReady(redis, 5_000), true);
    const subscriber = subscriberOf(redis);
    clients.push(subscriber);
    return new RedisChangeBus(redis, subscriber, logger);
  }

  test('on Redis: a notice published by one instance reaches the others (and itself), per topic', async () => {
    const server = await startTestRedis();
    servers.push(server);
    const a = await busOn(server.url);
    const b = await busOn(server.url);
    const heard: string[] = [];
    const stopKeys = b.subscribe('keys', () => heard.push('b:keys'));
    b.subscribe('pools', () => heard.push('b:pools'));
    a.subscribe('keys', () => heard.push('a:keys'));
    await Promise.all([a.ready(), b.ready()]);
    a.publish('keys');
    await until(() => heard.length === 2, 'both instances hear "keys"');
    assert.deepEqual(heard.sort(), ['a:keys', 'b:keys']);
    stopKeys();
    await b.ready();
    heard.length = 0;
    a.publish('keys');
    a.publish('pools');
    await until(() => heard.includes('b:pools') && heard.includes('a:keys'), 'the notices after unsubscribe');
    assert.ok(!heard.includes('b:keys'), 'an unsubscribed listener hears nothing');
  });

  test('on Redis: publishing while Redis is down does not throw; subscriptions come back with it', async () => {
    const server = await startTestRedis();
    const a = await busOn(server.url);
    const b = await busOn(server.url);
    let heard = 0;
    b.subscribe('keys', () => {
      heard += 1;
    });
    await b.ready();
    await server.kill();
    a.publish('keys'); // dropped: the store poll is the fallback
    const back = await startTestRedis(server.port);
    servers.push(back);
    await until(() => {
      a.publish('keys'); // repeated until both connections are back and the subscription renewed
      return heard > 0;
    }, 'a notice after Redis returned');
  });

  test('on Redis: a subscription made while Redis is down takes effect when it comes up', async () => {
    const server = await startTestRedis();
    const a = await busOn(server.url);
    const b = await busOn(server.url);
    await server.kill();
    let heard = 0;
    b.subscribe('late', () => {
      heard += 1;
    });
    const back = await startTestRedis(server.port);
    servers.push(back);
    await until(() => {
      a.publish('late');
      return heard > 0;
    }, 'a notice on the subscription made during the outage');
  });

  test('in-process: the same contract, asynchronously; a throwing listener does not stop the others', async () => {
    const lines: string[] = [];
    const bus = new LocalChangeBus(createLogger({ level: 'error', write: (line) => lines.push(line) }));
    const heard: string[] = [];
    bus.subscribe('keys', () => {
      throw new Error('boom');
    });
    const stop = bus.subscribe('keys', () => heard.push('second'));
    bus.publish('keys');
    assert.deepEqual(heard, [], 'not synchronously');
    await until(() => heard.length === 1, 'the notice');
    assert.equal(lines.filter((line) => line.includes('change listener failed')).length, 1);
    stop();
    bus.publish('keys');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(heard, ['second']);
  });
});
