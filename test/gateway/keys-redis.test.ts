/**
 * Gateway keys across two instances on one store and one Redis (`redis_url`, SPEC §11): a key's
 * `daily_quota` is counted once for both (Redis), where two instances without Redis would each admit
 * the whole quota until their usage flushes meet in the store; and a key created or deleted through one
 * instance's API is known or refused by the other (bus notice, poll as fallback) within 1 s. Both
 * instances read a clock that starts at noon (helpers/midday-clock.ts), so the quota's day cannot turn
 * during the test.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { type ApiFixture, startApiFixture } from '../api/setup.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { post, startHttpServer, type TestServer } from '../helpers/http.js';
import { middayClock } from '../helpers/midday-clock.js';
import { startTestRedis, type TestRedis } from '../helpers/redis.js';

const CALL = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
const QUOTA = 30;

interface Key {
  id: string;
  value: string;
}

async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('gateway keys on two instances sharing a store and a Redis', () => {
  let origin: TestServer;
  let redis: TestRedis;
  let f: ApiFixture;
  let second: TestApp;

  before(async () => {
    origin = await startHttpServer((_req, res, body) => {
      const { id } = JSON.parse(body) as { id: unknown };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0xaa36a7' }));
    });
    redis = await startTestRedis();
    const raw = {
      redis_url: redis.url,
      networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
      pools: [poolOf('p', [origin.url])],
    };
    const clock = middayClock();
    f = await startApiFixture(raw, { clock });
    second = await startApp(
      {
        ...raw,
        // Instances sharing a store share its secrets key.
        secrets_key_file: join(f.app.config.data_dir, 'secrets.key'),
        ...(f.app.config.database_url === undefined
          ? { data_dir: f.app.config.data_dir }
          : { database_url: f.app.config.database_url }),
      },
      { clock },
    );
  });
  after(async () => {
    await second?.close();
    await f?.close();
    await redis?.stop();
    await origin?.close();
  });

  it("a key's daily quota is spent once across both instances", async () => {
    const created = await f.call('POST', `/accounts/${f.accountId}/gateway/keys`, { body: { daily_quota: QUOTA } });
    const key = created.body.result as Key;
    const auth = { authorization: `Bearer ${key.value}` };
    const urls = [f.app.rpcUrl('sepolia'), second.rpcUrl('sepolia')];
    await until(async () => (await post(urls[1] as string, CALL, auth)).status === 200, 2000, 'the key on the second');
    // One call spent above; now 2 × QUOTA more, alternating, faster than a usage flush (1 s) could
    // tell one instance what the other admitted.
    const statuses: number[] = [];
    for (let i = 0; i < 2 * QUOTA; i += 1) statuses.push((await post(urls[i % 2] as string, CALL, auth)).status);
    const admitted = 1 + statuses.filter((s) => s === 200).length;
    assert.ok(
      statuses.every((s) => s === 200 || s === 429),
      statuses.join(' '),
    );
    // Redis counts exactly the quota; the grant that reaches it ends credit in that instance. Beyond it,
    // only calls admitted on credit while an instance's reserve was in flight (a Redis round trip slower
    // than a call through the other instance: none on a quiet machine, a few on a loaded one), each
    // counted as an overrun.
    const client = new Redis(redis.url);
    try {
      const counters = await client.keys('switchyard:quota:*');
      assert.equal(counters.length, 1);
      assert.equal(await client.get(counters[0] as string), String(QUOTA), 'Redis counted exactly the quota');
    } finally {
      client.disconnect();
    }
    let overrun = 0;
    for (const app of [f.app, second]) {
      const text = await (await fetch(app.apiUrl.replace(/\/client\/v4$/, '/metrics'))).text();
      overrun += Number(/^switchyard_limits_quota_overrun_total\{backend="redis"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    }
    assert.equal(
      admitted,
      QUOTA + overrun,
      `admitted ${admitted} of a quota of ${QUOTA}, ${overrun} counted as overrun`,
    );
    // Without Redis each instance would admit the whole quota (2 × QUOTA).
    assert.ok(admitted < QUOTA * 1.5, `admitted ${admitted} of a quota of ${QUOTA}`);
  });

  it('a key deleted through one instance is refused by the other within 1 s', async () => {
    const key = (await f.call('POST', `/accounts/${f.accountId}/gateway/keys`, { body: {} })).body.result as Key;
    const auth = { authorization: `Bearer ${key.value}` };
    await until(async () => (await post(second.rpcUrl('sepolia'), CALL, auth)).status === 200, 1000, 'the new key');
    assert.equal((await f.call('DELETE', `/accounts/${f.accountId}/gateway/keys/${key.id}`)).status, 200);
    const deleted = Date.now();
    await until(async () => (await post(second.rpcUrl('sepolia'), CALL, auth)).status === 401, 1000, 'refused');
    assert.ok(Date.now() - deleted < 1000);
  });
});
