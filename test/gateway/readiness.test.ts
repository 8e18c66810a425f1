/**
 * `GET /healthz` and `GET /readyz` on the gateway listener (SPEC §11) against real anvil origins, with
 * API keys required and a one-call rate limit, so the probes show they need neither: readyz is 200 while
 * the store answers and every supported network has a routable pool, and 503 (naming why) when a
 * network's only pool is disabled through the API, when its only origin dies (its monitor marks it
 * unhealthy), and when the store is closed; healthz is 200 throughout. Retired networks are left out.
 * Runs on SQLite and on PostgreSQL (POSTGRES_SUITES).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ApiFixture, startApiFixture } from '../api/setup.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { send } from '../helpers/http.js';

const rpcMonitor = { type: 'jsonrpc', interval: 1, timeout: 1, retries: 0, consecutive_down: 1, consecutive_up: 1 };

interface Report {
  ready: boolean;
  store: { ready: boolean; reason: string | null };
  networks: Record<string, { ready: boolean; reason: string | null }>;
}

let alpha: AnvilNode;
let beta: AnvilNode;
let fx: ApiFixture;

before(async () => {
  [alpha, beta] = await Promise.all([startTestAnvil(), startTestAnvil()]);
  fx = await startApiFixture({
    networks: {
      sepolia: { chain_id: 11_155_111, pools: ['alpha'] },
      holesky: { chain_id: 11_155_111, pools: ['beta'] },
      rinkeby: { chain_id: 4, pools: [], retired_on: '2023-01-30', replacement: 'sepolia' },
    },
    pools: [
      { name: 'alpha', origins: [{ name: 'a', address: alpha.url }], monitor: rpcMonitor },
      { name: 'beta', origins: [{ name: 'b', address: beta.url }] },
    ],
    gateway: { api_keys: ['probe-test-key-0123456789'], rate_limit: { requests_per_second: 0.001, burst: 1 } },
  });
});
after(async () => {
  await fx?.close();
  await Promise.all([alpha?.stop(), beta?.stop()]);
});

async function readyz(): Promise<{ status: number; report: Report; headers: Record<string, string> }> {
  const res = await send(`${fx.app.gatewayUrl}/readyz`, { method: 'GET' });
  return { status: res.status, report: res.json<Report>(), headers: res.headers };
}

async function healthz() {
  return send(`${fx.app.gatewayUrl}/healthz`, { method: 'GET' });
}

/** Polls readyz until `condition` holds (bounded); returns the last answer. */
async function readyzUntil(
  what: string,
  condition: (r: { status: number; report: Report }) => boolean,
  timeoutMs = 15_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await readyz();
    if (condition(answer)) return answer;
    if (Date.now() > deadline) assert.fail(`not within ${timeoutMs} ms: ${what}; last: ${JSON.stringify(answer)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function poolId(name: string): Promise<string> {
  const list = await fx.call('GET', `/accounts/${fx.accountId}/load_balancers/pools?per_page=100`);
  return (list.body.result as Array<{ id: string; name: string }>).find((p) => p.name === name)!.id;
}

describe('healthz and readyz', () => {
  it('healthz: 200 {"ok":true} without a key, as often as asked (no rate limit); HEAD too; POST is 405', async () => {
    for (let i = 0; i < 3; i += 1) {
      const res = await healthz();
      assert.equal(res.status, 200);
      assert.deepEqual(res.json(), { ok: true });
      assert.equal(res.headers['cache-control'], 'no-store');
    }
    const head = await send(`${fx.app.gatewayUrl}/healthz`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    const post = await send(`${fx.app.gatewayUrl}/healthz`, { method: 'POST', body: '{}' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
    // A gateway call still needs its key: the probes are the only exemption.
    assert.equal((await send(`${fx.app.gatewayUrl}/v1/sepolia`, { body: '{}' })).status, 401);
  });

  it('readyz: 200 with every supported network ready (retired ones left out), without a key or rate limit', async () => {
    // The monitor's first check lands within its first interval; until then alpha counts as healthy.
    const first = await readyzUntil('ready', (r) => r.status === 200);
    for (let i = 0; i < 3; i += 1) assert.equal((await readyz()).status, 200);
    assert.deepEqual(first.report, {
      ready: true,
      store: { ready: true, reason: null },
      networks: { sepolia: { ready: true, reason: null }, holesky: { ready: true, reason: null } },
    });
    assert.equal(first.headers['content-type'], 'application/json');
    assert.equal((await send(`${fx.app.gatewayUrl}/readyz?verbose=1`, { method: 'GET' })).status, 200);
  });

  it("readyz: 503 while a network's only pool is disabled through the API; 200 again once enabled", async () => {
    const id = await poolId('beta');
    assert.equal(
      (await fx.call('PATCH', `/accounts/${fx.accountId}/load_balancers/pools/${id}`, { body: { enabled: false } }))
        .status,
      200,
    );
    const down = await readyzUntil('holesky not ready', (r) => r.status === 503);
    assert.equal(down.report.ready, false);
    assert.deepEqual(down.report.networks.holesky, {
      ready: false,
      reason: 'no routable pool (beta: pool is disabled)',
    });
    assert.deepEqual(down.report.networks.sepolia, { ready: true, reason: null });
    assert.equal((await healthz()).status, 200);
    assert.equal(
      (await fx.call('PATCH', `/accounts/${fx.accountId}/load_balancers/pools/${id}`, { body: { enabled: true } }))
        .status,
      200,
    );
    await readyzUntil('ready again', (r) => r.status === 200);
  });

  it("readyz: 503 when a network's only origin dies and its monitor marks it unhealthy", async () => {
    await alpha.stop();
    const down = await readyzUntil('sepolia not ready', (r) => r.status === 503);
    assert.equal(down.report.networks.sepolia?.ready, false);
    assert.match(
      down.report.networks.sepolia?.reason ?? '',
      /^no routable pool \(alpha: (pool is unhealthy|no enabled, healthy origin with weight > 0)\)$/,
    );
    assert.deepEqual(down.report.networks.holesky, { ready: true, reason: null });
    assert.deepEqual(down.report.store, { ready: true, reason: null });
    assert.equal((await healthz()).status, 200);
  });

  it('readyz: 503 once the store does not answer; healthz still 200', async () => {
    await fx.app.store.close();
    const down = await readyzUntil('store not ready', (r) => !r.report.store.ready);
    assert.equal(down.status, 503);
    assert.deepEqual(down.report.store, { ready: false, reason: 'the store did not answer a query' });
    assert.equal((await healthz()).status, 200);
  });
});
