/**
 * The offline default shows health at work: with the built-in devnet (two real anvil nodes, one pool with
 * a jsonrpc monitor every 5 s, consecutive_down 2), killing one anvil node is visible in
 * GET …/pools/{id}/health within a few intervals, while requests through /v1/sepolia keep succeeding.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OFFLINE_DEFAULT_CONFIG } from '../../src/config/defaults.js';
import { type ApiFixture, startApiFixture } from '../api/setup.js';

describe('devnet default: a killed anvil origin', () => {
  let fx: ApiFixture;
  before(async () => {
    fx = await startApiFixture({
      ...OFFLINE_DEFAULT_CONFIG,
      devnet: { ...OFFLINE_DEFAULT_CONFIG.devnet, base_port: 0 },
    });
  });
  after(() => fx?.close());

  it('shows up in the health endpoint while requests keep succeeding', async () => {
    const devnet = fx.app.devnet;
    assert.ok(devnet, 'the devnet runs');
    const list = await fx.call('GET', `/accounts/${fx.accountId}/load_balancers/pools`);
    const pool = (list.body.result as Array<{ id: string; name: string }>).find((p) => p.name === 'sepolia-devnet');
    assert.ok(pool);
    const victim = devnet.nodes[0]!;
    const url = `${fx.app.gatewayUrl}/v1/sepolia`;
    const call = async (id: number) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'eth_chainId', id }),
      });
      return { status: res.status, body: (await res.json()) as { result?: string } };
    };
    assert.equal((await call(1)).body.result, '0xaa36a7');
    victim.killNow();

    const started = Date.now();
    let requests = 0;
    let seen: { healthy: boolean; failure_reason: string } | undefined;
    // Bounded: 2 failed checks at a 5 s interval (plus jitter and the first check's phase) ≈ 10-16 s.
    while (Date.now() - started < 30_000) {
      const answer = await call(++requests);
      assert.equal(answer.status, 200, `request ${requests} failed`);
      assert.equal(answer.body.result, '0xaa36a7');
      const health = await fx.call('GET', `/accounts/${fx.accountId}/load_balancers/pools/${pool.id}/health`);
      const origins = (
        Object.values(
          (
            health.body.result as {
              pop_health: Record<
                string,
                { origins: Array<Record<string, { healthy: boolean; failure_reason: string }>> }
              >;
            }
          ).pop_health,
        )[0]?.origins ?? []
      ).map((entry) => Object.entries(entry)[0]!);
      seen = origins.find(([address]) => address === victim.url)?.[1];
      if (seen?.healthy === false) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(seen?.healthy, false, 'the killed origin is Unhealthy in the health endpoint');
    assert.match(seen?.failure_reason ?? '', /^connection refused/);
    const get = await fx.call('GET', `/accounts/${fx.accountId}/load_balancers/pools/${pool.id}`);
    const result = get.body.result as { healthy: boolean; origins: Array<{ name: string; healthy: boolean }> };
    assert.equal(result.healthy, true, 'the pool stays healthy on the other node');
    assert.deepEqual(
      result.origins.map((o) => [o.name, o.healthy]),
      [
        ['anvil-0', false],
        ['anvil-1', true],
      ],
    );
  });
});
