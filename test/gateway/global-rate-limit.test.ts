/**
 * Global rate limits (SPEC §11, `redis_url`): two whole Switchyards in-process, as two `serve` instances,
 * on one real redis-server share each client's bucket. One client sends at 3× `gateway.rate_limit`,
 * alternating between the two gateways, for 10 s (real time: the buckets live on Redis's
 * clock); the calls admitted (200) against those refused (429 / -32005) come within ±10 % of
 * limit × t + burst — one instance alone would admit that much, two without Redis twice as much.
 * Fail open: Redis killed under an app, or absent at its start → calls are decided by the app's own
 * buckets (never refused for the outage), one warning per outage, `switchyard_limits_backend_up` 0.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/log.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { type HttpResult, post, type RpcAnswer, send, startHttpServer, type TestServer } from '../helpers/http.js';
import { startTestRedis, type TestRedis } from '../helpers/redis.js';

const CALL = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
const LIMIT = { requests_per_second: 50, burst: 50 };
const SEND_PER_SECOND = 3 * LIMIT.requests_per_second;
const DURATION_MS = 10_000; // SPEC §11: "for 10 s"

describe('gateway.rate_limit shared by two instances through redis_url', () => {
  let origin: TestServer;
  let redis: TestRedis;
  const apps: TestApp[] = [];

  before(async () => {
    origin = await startHttpServer((_req, res, body) => {
      const { id } = JSON.parse(body) as { id: unknown };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0xaa36a7' }));
    });
    redis = await startTestRedis();
    for (let i = 0; i < 2; i += 1) {
      apps.push(
        await startApp({
          redis_url: redis.url,
          networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
          pools: [poolOf('p', [origin.url])],
          gateway: { rate_limit: LIMIT },
        }),
      );
    }
  });
  after(async () => {
    for (const app of apps) await app.close();
    await redis?.stop();
    await origin?.close();
  });

  it('a client at 3× the limit through both for 10 s is admitted within ±10 % of limit × t + burst', async (t) => {
    const [a, b] = apps as [TestApp, TestApp];
    const urls = [a.rpcUrl(), b.rpcUrl()];
    const answers: Promise<HttpResult>[] = [];
    const started = performance.now();
    let sent = 0;
    const admittedPerHalfSecond: number[] = [];
    for (;;) {
      const elapsed = performance.now() - started;
      if (elapsed >= DURATION_MS) break;
      const due = Math.floor((elapsed * SEND_PER_SECOND) / 1000) + 1;
      for (; sent < due; sent += 1) {
        const answer = post(urls[sent % 2] as string, CALL);
        const half = Math.floor(elapsed / 500);
        answers.push(
          answer.then((res) => {
            if (res.status === 200) admittedPerHalfSecond[half] = (admittedPerHalfSecond[half] ?? 0) + 1;
            return res;
          }),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 2)); // pacing (the send rate), not synchronisation
    }
    const elapsedMs = performance.now() - started;
    const results = await Promise.all(answers);
    const statuses = results.map((res) => res.status);
    const admitted = statuses.filter((s) => s === 200).length;
    const refused = statuses.filter((s) => s === 429).length;
    const ideal = (LIMIT.requests_per_second * elapsedMs) / 1000 + LIMIT.burst;
    t.diagnostic(`admitted per half second: ${admittedPerHalfSecond.join(' ')}`);
    t.diagnostic(
      `sent ${sent}: ${admitted} admitted, ${refused} refused in ${Math.round(elapsedMs)} ms; ideal ${ideal.toFixed(1)}`,
    );
    assert.equal(admitted + refused, sent, 'every call is admitted or refused with 429');
    assert.ok(sent >= 0.9 * SEND_PER_SECOND * (DURATION_MS / 1000), `the machine kept the send rate (${sent})`);
    assert.ok(admitted >= 0.9 * ideal && admitted <= 1.1 * ideal, `admitted ${admitted}, ideal ${ideal.toFixed(1)}`);
    const refusal = results.find((res) => res.status === 429);
    assert.equal(refusal?.json<RpcAnswer>().error?.code, -32005);
    assert.match(refusal?.headers['retry-after'] ?? '', /^\d+$/);
  });
});

describe('redis_url unreachable: the gateway fails open to its own limits', () => {
  let origin: TestServer;
  const closers: Array<() => Promise<void>> = [];

  before(async () => {
    origin = await startHttpServer((_req, res, body) => {
      const { id } = JSON.parse(body) as { id: unknown };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0xaa36a7' }));
    });
  });
  after(async () => {
    for (const close of closers.reverse()) await close();
    await origin?.close();
  });

  async function appOn(redisUrl: string): Promise<{ app: TestApp; lines: string[] }> {
    const lines: string[] = [];
    const app = await startApp(
      {
        redis_url: redisUrl,
        networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
        pools: [poolOf('p', [origin.url])],
        gateway: { rate_limit: { requests_per_second: 5, burst: 10 } },
      },
      { logger: createLogger({ level: 'info', write: (line) => lines.push(line) }) },
    );
    closers.push(() => app.close());
    return { app, lines };
  }

  async function statuses(app: TestApp, count: number): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < count; i += 1) out.push((await post(app.rpcUrl(), CALL)).status);
    return out;
  }

  const metricsOf = async (app: TestApp) =>
    (await send(app.apiUrl.replace(/\/client\/v4$/, '/metrics'), { method: 'GET' })).text;

  it('Redis killed under a running app: calls go on under local limits, one warning, metric 0', async () => {
    const redis = await startTestRedis();
    closers.push(() => redis.stop());
    const { app, lines } = await appOn(redis.url);
    assert.match(await metricsOf(app), /^switchyard_limits_backend_up\{backend="redis"\} 1$/m);
    await redis.kill();
    const answers = await statuses(app, 30);
    // The first calls may still spend a held lease; then the local bucket (burst 10) decides.
    assert.ok(answers.filter((s) => s === 200).length >= 10, answers.join(' '));
    assert.ok(
      answers.every((s) => s === 200 || s === 429),
      answers.join(' '),
    );
    assert.equal(lines.filter((line) => line.includes('shared limits unreachable')).length, 1, lines.join(''));
    const metrics = await metricsOf(app);
    assert.match(metrics, /^switchyard_limits_backend_up\{backend="redis"\} 0$/m);
    assert.match(metrics, /^switchyard_limits_fallback_total\{backend="redis"\} [1-9]\d*$/m);
  });

  it('Redis absent at start: the app starts and serves, logged once', async () => {
    const dead = await startTestRedis();
    const url = `redis://:hunter2@127.0.0.1:${dead.port}`;
    await dead.stop();
    const { app, lines } = await appOn(url);
    const answers = await statuses(app, 12);
    assert.deepEqual(answers.slice(0, 10), Array(10).fill(200), 'the local burst');
    assert.equal(lines.filter((line) => line.includes('shared limits unreachable')).length, 1, lines.join(''));
    assert.ok(
      lines.every((line) => !line.includes('hunter2')),
      'the password is never logged',
    );
  });
});
