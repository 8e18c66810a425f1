/**
 * Daily key quotas under concurrency (SPEC §20): two instances on one store and one real redis-server,
 * each with `gateway.workers: 2` (four serving processes), hit at once — 500 HTTP single calls, 60
 * batches of 10, 3000 WebSocket calls — for a key with a daily quota of 100. Admitted calls stay within
 * quota + min(processes × largest batch, max(10 % of quota, 100)) (and here, as docs/scaling.md
 * derives, within quota + processes × ⌈quota/1000⌉), and every call beyond the quota shows in
 * `switchyard_limits_quota_overrun_total`. Then Redis itself: restarted without its data, a key's count
 * starts again from the store's usage (no fresh quota); down, `switchyard_limits_backend_up{backend=
 * "redis"}` is 0 on both instances, a `warn` line says limits fail open, and calls still flow; back, 1.
 * Both controls read a clock that starts at noon (helpers/midday-clock.ts), and their workers read the
 * control's time, so the quota's day cannot turn during the test.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { createLogger, type LogLevel } from '../../src/log.js';
import { type ApiFixture, startApiFixture } from '../api/setup.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { freshCall, post, startHttpServer, type TestServer } from '../helpers/http.js';
import { middayClock } from '../helpers/midday-clock.js';
import { startTestRedis, type TestRedis } from '../helpers/redis.js';

const QUOTA = 100;
/** Serving processes: two instances × two workers. */
const PROCESSES = 4;

interface Key {
  id: string;
  value: string;
}

/** SPEC §20: calls admitted beyond a daily quota, for the largest request of `batch` calls. */
function spec20Bound(batch: number): number {
  return Math.min(PROCESSES * batch, Math.max(0.1 * QUOTA, 100));
}

async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const CALL = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] });

describe('daily quotas: two instances with two workers each on one Redis', () => {
  let origin: TestServer;
  let redis: TestRedis;
  let a: ApiFixture;
  let b: TestApp;
  const lines: string[] = [];

  before(async () => {
    origin = await startHttpServer((_req, res, body) => {
      const parsed = JSON.parse(body) as { id: unknown } | { id: unknown }[];
      const answer = (call: { id: unknown }) => ({ jsonrpc: '2.0', id: call.id, result: '0xaa36a7' });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)));
    });
    redis = await startTestRedis();
    const level = (process.env.SWITCHYARD_TEST_LOG as LogLevel | undefined) ?? 'info';
    const logger = createLogger({ level, write: (line) => lines.push(line) });
    const raw = {
      redis_url: redis.url,
      gateway: { workers: 2 },
      networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
      pools: [poolOf('p', [origin.url])],
    };
    const clock = middayClock();
    a = await startApiFixture(raw, { clock, logger });
    b = await startApp(
      {
        ...raw,
        // One store: SQLite's data_dir, or PostgreSQL with the first instance's secrets key.
        ...(a.app.config.database_url === undefined
          ? { data_dir: a.app.config.data_dir }
          : {
              database_url: a.app.config.database_url,
              secrets_key_file: join(a.app.config.data_dir, 'secrets.key'),
            }),
      },
      { clock, logger },
    );
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await redis?.stop();
    await origin?.close();
  });

  const urls = (): string[] => [a.app.rpcUrl('sepolia'), b.rpcUrl('sepolia')];

  /** A new key, known to both instances (one call through each, which the quota counts). */
  async function newKey(dailyQuota: number): Promise<Key> {
    const created = await a.call('POST', `/accounts/${a.accountId}/gateway/keys`, {
      body: { daily_quota: dailyQuota },
    });
    const key = created.body.result as Key;
    for (const url of urls()) {
      await until(async () => (await freshCall(url, 'eth_chainId', [], key.value)).status === 200, 5_000, 'the key');
    }
    return key;
  }

  async function metric(name: string, labels = ''): Promise<number[]> {
    const apps = [a.app, b];
    return Promise.all(
      apps.map(async (app) => {
        const text = await (await fetch(app.apiUrl.replace(/\/client\/v4$/, '/metrics'))).text();
        let sum = 0;
        for (const match of text.matchAll(new RegExp(`^${name}\\{${labels}[^}]*\\} (\\d+)$`, 'gm'))) {
          sum += Number(match[1]);
        }
        return sum;
      }),
    );
  }

  /** Until `switchyard_limits_backend_up{backend="redis"}` is `value` on both instances. */
  async function redisUp(value: 0 | 1, ms: number): Promise<void> {
    const check = async () =>
      (await metric('switchyard_limits_backend_up', 'backend="redis"')).every((up) => up === value);
    await until(check, ms, `backend_up ${value} on both instances`);
  }

  async function overruns(): Promise<number> {
    return (await metric('switchyard_limits_quota_overrun_total')).reduce((x, y) => x + y, 0);
  }

  /** Checks the admitted count of one burst against SPEC §20, and that the overrun metric counts every call beyond. */
  async function assertWithinQuota(
    admitted: number,
    largest: number,
    overrunBefore: number,
    what: string,
  ): Promise<string> {
    const counted = (await overruns()) - overrunBefore;
    const text = `${what}: admitted ${admitted} of a quota of ${QUOTA}, ${counted} counted as overrun`;
    assert.ok(admitted <= QUOTA + spec20Bound(largest), text);
    assert.ok(admitted <= QUOTA + PROCESSES * Math.min(largest, Math.ceil(QUOTA / 1000)), `${text} (docs/scaling.md)`);
    // Under: chunks the other processes still hold (⌈100/50⌉ each), and a batch that no longer fits.
    assert.ok(admitted >= QUOTA - PROCESSES * Math.ceil(QUOTA / 50) - largest, text);
    assert.ok(counted >= admitted - QUOTA, `${text}: every call beyond the quota is counted`);
    return text;
  }

  it('500 concurrent single calls over HTTP', async (t) => {
    const key = await newKey(QUOTA);
    const before = await overruns();
    const answers = await Promise.all(
      Array.from({ length: 500 }, (_, i) => freshCall(urls()[i % 2] as string, 'eth_chainId', [], key.value)),
    );
    const statuses = new Set(answers.map((answer) => answer.status));
    assert.deepEqual([...statuses].sort(), [200, 429]);
    for (const answer of answers.filter((x) => x.status === 429)) {
      assert.equal((answer.body.error as { code: number }).code, -32005);
    }
    t.diagnostic(await assertWithinQuota(2 + answers.filter((x) => x.status === 200).length, 1, before, '500 singles'));
  });

  it('60 concurrent batches of 10 over HTTP', async (t) => {
    const key = await newKey(QUOTA);
    const before = await overruns();
    const batch = `[${Array.from({ length: 10 }, (_, i) => CALL(i)).join(',')}]`;
    const headers = { authorization: `Bearer ${key.value}`, connection: 'close' };
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => post(urls()[i % 2] as string, batch, headers)),
    );
    assert.ok(
      answers.every((x) => x.status === 200 || x.status === 429),
      answers.map((x) => x.status).join(' '),
    );
    const admitted = 2 + 10 * answers.filter((x) => x.status === 200).length;
    t.diagnostic(await assertWithinQuota(admitted, 10, before, '60 batches of 10'));
  });

  it('3000 WebSocket calls on 20 connections', async (t) => {
    const key = await newKey(QUOTA);
    const before = await overruns();
    const perConnection = 150;
    const counts = await Promise.all(
      Array.from({ length: 20 }, async (_, c) => {
        const url = (urls()[c % 2] as string).replace(/^http/, 'ws');
        const socket = new WebSocket(url, { headers: { authorization: `Bearer ${key.value}` } });
        await new Promise((resolve, reject) => {
          socket.once('open', resolve);
          socket.once('error', reject);
        });
        let ok = 0;
        let refused = 0;
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`${ok + refused} of ${perConnection} answers`)), 60_000);
          socket.on('message', (data) => {
            const answer = JSON.parse(String(data)) as { result?: unknown; error?: { code: number } };
            if (answer.result !== undefined) ok += 1;
            else if (answer.error?.code === -32005) refused += 1;
            else reject(new Error(String(data)));
            if (ok + refused === perConnection) {
              clearTimeout(timer);
              resolve();
            }
          });
          for (let i = 0; i < perConnection; i += 1) socket.send(CALL(i));
        });
        socket.close();
        return ok;
      }),
    );
    t.diagnostic(await assertWithinQuota(2 + counts.reduce((x, y) => x + y, 0), 1, before, '3000 WebSocket calls'));
  });

  it('a Redis restarted without its data does not grant a fresh quota: the count starts from the store', async (t) => {
    const key = await newKey(QUOTA);
    let admitted = 2;
    for (let i = 0; admitted < 60; i += 1) {
      if ((await freshCall(urls()[i % 2] as string, 'eth_chainId', [], key.value)).status === 200) admitted += 1;
    }
    // The usage flush (every 1 s) puts the 60 calls in the store, which seeds the controls' counts.
    await until(
      async () => {
        const usage = await a.call('GET', `/accounts/${a.accountId}/gateway/keys/${key.id}/usage`);
        const rows = usage.body.result as { requests: number }[];
        return rows.reduce((sum, row) => sum + row.requests, 0) >= 60;
      },
      10_000,
      'the usage in the store',
    );
    await redis.kill();
    redis = await startTestRedis(redis.port);
    await redisUp(1, 10_000);
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => freshCall(urls()[i % 2] as string, 'eth_chainId', [], key.value)),
    );
    const after = answers.filter((x) => x.status === 200).length;
    t.diagnostic(`admitted ${after} after the restart, 40 left before it`);
    // 40 were left. The new count starts from each instance's last view of the old one, and the two
    // views may differ by the chunks the other instance took since (≤ ⌈100/50⌉ per process); plus the
    // one call of credit per process.
    const held = PROCESSES * Math.ceil(QUOTA / 50);
    assert.ok(after <= QUOTA - 60 + held + PROCESSES, `admitted ${after} after the restart (40 were left)`);
    assert.ok(after >= QUOTA - 60 - held, `admitted ${after} after the restart (40 were left)`);
  });

  it('Redis down: backend_up 0 and a warn line that limits fail open, calls still flow; back up: 1', async () => {
    const key = await newKey(1_000_000);
    const warnings = (): string[] =>
      lines.filter((line) => line.includes('"level":"warn"') && line.includes('shared limits unreachable'));
    const warnedBefore = warnings().length;
    await redis.kill();
    await redisUp(0, 5_000);
    const during = await Promise.all(
      Array.from({ length: 40 }, (_, i) => freshCall(urls()[i % 2] as string, 'eth_chainId', [], key.value)),
    );
    assert.deepEqual(
      during.map((x) => x.status),
      during.map(() => 200),
    );
    assert.equal(warnings().length, warnedBefore + 2, 'one warning per instance');
    assert.match(warnings().at(-1) as string, /failing open/);
    assert.match(warnings().at(-1) as string, /"fails":"open"/);
    assert.ok((await metric('switchyard_limits_fallback_total', 'backend="redis"')).every((n) => n > 0));
    redis = await startTestRedis(redis.port);
    await redisUp(1, 10_000);
    assert.equal((await freshCall(urls()[0] as string, 'eth_chainId', [], key.value)).status, 200);
  });
});
