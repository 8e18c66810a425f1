/**
 * Health-driven routing through the real gateway (in-process app, real local origins on port 0):
 * - under concurrent load an origin killed mid-run costs no client read, the monitor marks it Unhealthy
 *   (visible at GET …/pools/{id}/health) and, when the whole primary pool is down, traffic fails over to
 *   the backup pool;
 * - weighted random selection follows the weights within tolerance and weight 0 gets nothing;
 * - least_outstanding_requests sends most traffic to the faster origin.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ApiFixture, startApiFixture } from '../api/setup.js';
import { TestOrigin } from './test-origin.js';

const rpcMonitor = { type: 'jsonrpc', interval: 1, timeout: 1, retries: 0, consecutive_down: 1, consecutive_up: 1 };

async function rpc(url: string, id: number): Promise<{ ok: boolean; detail: string }> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'eth_blockNumber', id }),
    });
    const body = (await res.json()) as { result?: unknown; error?: unknown };
    return {
      ok: res.status === 200 && typeof body.result === 'string',
      detail: `${res.status} ${JSON.stringify(body)}`,
    };
  } catch (err) {
    return { ok: false, detail: String(err) };
  }
}

/** `workers` concurrent loops of `each` requests; `midway` runs once after half of them are done. */
/** Calls the gateway forwarded to an origin (the chain tracker's head polls and eth_syncing left out). */
const forwarded = (origin: TestOrigin) =>
  origin.requests.filter((r) => r.rpc !== 'eth_getBlockByNumber' && r.rpc !== 'eth_syncing');

async function load(url: string, workers: number, each: number, midway?: () => Promise<void>): Promise<string[]> {
  const failures: string[] = [];
  let done = 0;
  let triggered: Promise<void> | undefined;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; i < each; i++) {
        const result = await rpc(url, w * 10_000 + i);
        if (!result.ok) failures.push(result.detail);
        done += 1;
        if (midway !== undefined && triggered === undefined && done >= (workers * each) / 2) triggered = midway();
      }
    }),
  );
  await triggered;
  return failures;
}

async function waitFor(what: string, condition: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('health-driven routing through the gateway', () => {
  const origins: Record<string, TestOrigin> = {};
  let fx: ApiFixture;

  before(async () => {
    for (const name of ['a', 'b', 'c', 'x', 'y', 'z', 'slow', 'fast']) origins[name] = await TestOrigin.start();
    // The chain tracker must know the weighted pool's heads: an origin of unknown head takes head reads
    // (eth_blockNumber) only after those at the head, so weights would not be what decides.
    for (const name of ['x', 'y', 'z']) origins[name]!.set({ headers: true });
    const o = (name: string, weight = 1) => ({ name, address: origins[name]!.url, weight });
    fx = await startApiFixture({
      networks: {
        sepolia: { chain_id: 11_155_111, pools: ['primary', 'backup'] },
        weighted: { chain_id: 11_155_111, pools: ['weights'] },
        lor: { chain_id: 11_155_111, pools: ['lor'] },
      },
      pools: [
        { name: 'primary', origins: [o('a'), o('b')], monitor: rpcMonitor },
        { name: 'backup', origins: [o('c')], monitor: rpcMonitor },
        { name: 'weights', origins: [o('x', 1), o('y', 0.5), o('z', 0)] },
        { name: 'lor', origins: [o('slow'), o('fast')], origin_steering: { policy: 'least_outstanding_requests' } },
      ],
    });
  });
  after(async () => {
    await fx?.close();
    for (const origin of Object.values(origins)) await origin.down();
  });

  async function poolHealth(name: string) {
    const list = await fx.call('GET', `/accounts/${fx.accountId}/load_balancers/pools?per_page=100`);
    const pool = (list.body.result as Array<{ id: string; name: string }>).find((p) => p.name === name)!;
    const res = await fx.call('GET', `/accounts/${fx.accountId}/load_balancers/pools/${pool.id}/health`);
    assert.equal(res.status, 200);
    const result = res.body.result as {
      pop_health: Record<
        string,
        { healthy: boolean; origins: Array<Record<string, { healthy: boolean; failure_reason: string }>> }
      >;
    };
    return Object.values(result.pop_health)[0]!;
  }

  it('an origin killed mid-run costs no client read; a dead primary pool fails over to the backup', async () => {
    const url = `${fx.app.gatewayUrl}/v1/sepolia`;
    const a = origins.a!;
    const b = origins.b!;
    const c = origins.c!;
    // The first checks run at a random point within the first interval: wait until both origins are
    // established Healthy, so killing a is a change of an established state (an event), not a first state.
    await waitFor('origins a and b checked Healthy', async () => {
      const health = await poolHealth('primary');
      return [a, b].every(
        (o) => health.origins.find((entry) => o.url in entry)?.[o.url]?.failure_reason === 'No failures',
      );
    });
    const failures = await load(url, 8, 40, () => a.down());
    assert.deepEqual(failures, [], 'no failed client read while origin a died');
    await waitFor('origin a Unhealthy in the health endpoint', async () => {
      const health = await poolHealth('primary');
      const entry = health.origins.find((o) => a.url in o)?.[a.url];
      return entry?.healthy === false && entry.failure_reason === 'connection refused';
    });
    const cBefore = c.requests.filter((r) => r.rpc === 'eth_blockNumber').length;
    const failover = await load(url, 8, 20, () => b.down());
    assert.deepEqual(failover, [], 'no failed client read while the whole primary pool died');
    await waitFor('pool primary Unhealthy', async () => (await poolHealth('primary')).healthy === false);
    const more = await load(url, 4, 10);
    assert.deepEqual(more, []);
    assert.ok(c.requests.filter((r) => r.rpc === 'eth_blockNumber').length > cBefore, 'the backup pool served');
    const events = await fx.app.store.db.selectFrom('health_events').selectAll().orderBy('seq').execute();
    const described = events.map(
      (e) => `${e.event_source} ${e.origin_name ?? e.pool_name} ${e.previous}->${e.new_health}`,
    );
    assert.ok(described.includes('origin a Healthy->Unhealthy'), described.join('\n'));
    assert.ok(described.includes('pool primary Healthy->Unhealthy'), described.join('\n'));
    await a.up();
    await b.up();
  });

  it('weighted random selection follows the weights; weight 0 gets nothing', async () => {
    const count = () => ['x', 'y', 'z'].map((n) => forwarded(origins[n]!).length);
    const before = count();
    const failures = await load(`${fx.app.gatewayUrl}/v1/weighted`, 10, 60);
    assert.deepEqual(failures, []);
    const [x, y, z] = count().map((n, i) => n - (before[i] ?? 0)) as [number, number, number];
    assert.equal(x + y + z, 600);
    assert.equal(z, 0, 'weight 0 is never chosen');
    // Expected 400 : 200. Binomial sd ≈ 11.5; ±60 is > 5 sd.
    assert.ok(Math.abs(x - 400) <= 60, `x got ${x} of 600, expected about 400`);
  });

  it('least_outstanding_requests prefers the origin that answers faster', async () => {
    origins.slow!.set({ delayMs: 150 });
    const before = [forwarded(origins.slow!).length, forwarded(origins.fast!).length];
    const failures = await load(`${fx.app.gatewayUrl}/v1/lor`, 8, 15);
    assert.deepEqual(failures, []);
    const slow = forwarded(origins.slow!).length - (before[0] ?? 0);
    const fast = forwarded(origins.fast!).length - (before[1] ?? 0);
    assert.equal(slow + fast, 120);
    assert.ok(fast > slow * 2, `fast ${fast} vs slow ${slow}`);
  });
});
