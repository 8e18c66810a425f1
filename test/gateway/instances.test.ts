/**
 * Two `serve` instances, each with `gateway.workers: 2`, on one store (the PostgreSQL pass's database,
 * else one SQLite file) and one real redis-server (SPEC §11):
 * - a gateway key created through one instance's API works on the other;
 * - the key's rate limit, hammered at 3× through both instances (and so all four workers) for 10 s,
 *   admits within ±10 % of limit × t + burst — one bucket for the whole fleet, leased from Redis;
 * - the key deleted through one instance is refused everywhere within 1 s;
 * - a filter made through one instance is polled from its origin through the other (filter affinity on
 *   Redis): the pool has two origins, and the one that did not make the filter answers "filter not found".
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { type CliProcess, runCli, spawnCli } from '../helpers/cli.js';
import { freshCall, send } from '../helpers/http.js';
import { startTestRedis, type TestRedis } from '../helpers/redis.js';
import { type TestStoreLocation, testStoreLocation } from '../helpers/store.js';

const ACCOUNT = '5317c4a1d00d5317c4a1d00d5317c4a1';
const LIMIT = { requests_per_second: 20, burst: 20 };
const DURATION_MS = 10_000; // SPEC §11: "for 10 s"

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('two serve instances with two workers each, on one store and one Redis', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-instances-'));
  let anvil: AnvilNode;
  let second: AnvilNode;
  let redis: TestRedis;
  let location: TestStoreLocation;
  const procs: CliProcess[] = [];
  const rpcUrls: string[] = [];
  let apiBase: string;
  let headers: Record<string, string>;

  before(async () => {
    anvil = await startTestAnvil();
    second = await startTestAnvil();
    redis = await startTestRedis();
    location = await testStoreLocation();
    const store =
      location.database_url === undefined
        ? `data_dir: ${location.data_dir}`
        : `data_dir: ${join(dir, 'data')}\ndatabase_url: "${location.database_url}"`;
    const config = join(dir, 'serve.yaml');
    writeFileSync(
      config,
      [
        store,
        `redis_url: "${redis.url}"`,
        'gateway: { listen: "127.0.0.1:0", workers: 2 }',
        'api: { listen: "127.0.0.1:0" }',
        'networks: { sepolia: { chain_id: 11155111, pools: [main] } }',
        'pools:',
        `  - { name: main, origins: [{ name: a, address: "${anvil.url}" }, { name: b, address: "${second.url}" }] }`,
        '',
      ].join('\n'),
    );
    for (let i = 0; i < 2; i += 1) {
      const proc = spawnCli(['serve', '--config', config]);
      procs.push(proc);
      const started = await proc.waitForLog((line) => line.msg === 'switchyard started', 60_000);
      rpcUrls.push(`${started.gateway as string}/v1/sepolia`);
      if (i === 0) apiBase = started.api as string;
    }
    const made = await runCli(['token', 'create', '--account', ACCOUNT, '--config', config]);
    assert.equal(made.code, 0, made.stderr);
    headers = { authorization: `Bearer ${made.stdout.trim()}`, 'content-type': 'application/json' };
  });
  after(async () => {
    for (const proc of procs) proc.kill('SIGTERM');
    await Promise.all(procs.map((proc) => proc.waitForExit(15_000).catch(() => proc.kill('SIGKILL'))));
    await redis?.stop();
    await anvil?.stop();
    await second?.stop();
    location?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shares a key, its rate limit within ±10 % across four workers, and its deletion within 1 s', async (t) => {
    const made = await send(`${apiBase}/accounts/${ACCOUNT}/gateway/keys`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'fleet', rate_limit: LIMIT }),
    });
    assert.equal(made.status, 200, made.text);
    const { id, value } = (made.json() as { result: { id: string; value: string } }).result;
    // Created on the first instance, known to every worker of the second within 1 s.
    await waitFor('the key on the second instance', 1_000, async () => {
      const statuses = await Promise.all(
        [0, 1, 2, 3].map(() => freshCall(rpcUrls[1] as string, 'eth_chainId', [], value).then((a) => a.status)),
      );
      return statuses.every((status) => status === 200);
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // the probe calls' tokens refill (pacing)

    const started = performance.now();
    const answers: Array<Promise<number>> = [];
    let sent = 0;
    for (;;) {
      const elapsed = performance.now() - started;
      if (elapsed >= DURATION_MS) break;
      const due = Math.floor((elapsed * 3 * LIMIT.requests_per_second) / 1000) + 1;
      for (; sent < due; sent += 1)
        answers.push(freshCall(rpcUrls[sent % 2] as string, 'eth_chainId', [], value).then((a) => a.status));
      await new Promise((resolve) => setTimeout(resolve, 5)); // the send rate's pacing
    }
    const elapsedMs = performance.now() - started;
    const statuses = await Promise.all(answers);
    const admitted = statuses.filter((status) => status === 200).length;
    const ideal = (LIMIT.requests_per_second * elapsedMs) / 1000 + LIMIT.burst;
    t.diagnostic(`${admitted} of ${sent} admitted; ideal ${ideal.toFixed(1)}`);
    assert.ok(
      statuses.every((status) => status === 200 || status === 429),
      statuses.join(' '),
    );
    assert.ok(admitted >= 0.9 * ideal && admitted <= 1.1 * ideal, `admitted ${admitted}, ideal ${ideal.toFixed(1)}`);

    const deleted = await send(`${apiBase}/accounts/${ACCOUNT}/gateway/keys/${id}`, { method: 'DELETE', headers });
    assert.equal(deleted.status, 200, deleted.text);
    const deletedAt = performance.now();
    await waitFor('the key refused by every worker of both instances', 1_000, async () => {
      const all = await Promise.all(
        [0, 1, 2, 3, 4, 5, 6, 7].map((i) =>
          freshCall(rpcUrls[i % 2] as string, 'eth_chainId', [], value).then((a) => a.status),
        ),
      );
      return all.every((status) => status === 401);
    });
    assert.ok(performance.now() - deletedAt < 1_000);
  });
  it('a filter made through one instance is polled from its origin through every worker of the other', async () => {
    const made = await freshCall(rpcUrls[0] as string, 'eth_newBlockFilter');
    const filterId = made.body.result;
    assert.equal(typeof filterId, 'string', JSON.stringify(made.body));
    // Each fresh connection goes to the next worker; without the shared entry, half of the second
    // instance's polls would go to the origin that does not know the filter.
    let inARow = 0;
    let last: unknown;
    await waitFor('ten polls in a row answered through the second instance', 5_000, async () => {
      const { body } = await freshCall(rpcUrls[1] as string, 'eth_getFilterChanges', [filterId]);
      last = body;
      inARow = Array.isArray(body.result) ? inARow + 1 : 0;
      return inARow >= 10;
    }).catch((err: Error) => {
      throw new Error(`${err.message}; last answer ${JSON.stringify(last)}`);
    });
  });
});
