/**
 * Steering by measured latency (SPEC §17), through the gateway, with "provider" proxies in front of one
 * real anvil node that add latency to every client call:
 *   - `origin_steering.policy: dynamic_latency`: after a warm-up most calls go to the faster origin of
 *     the pool, and some still explore the slower one; when the slower one recovers (faster than the
 *     other now) it wins the traffic back;
 *   - `networks.{name}.steering: dynamic_latency` puts the pool whose best origin scores best first;
 *     `off` keeps the configured failover order.
 * The exploration share is raised to 20 % (gateway.steering_exploration) so that the recovered origin
 * gathers its new samples within seconds; calls run 6 at a time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { post } from '../helpers/http.js';
import { headsKnown, type ProviderProxy, startProviderProxy } from '../helpers/provider-proxy.js';

const ADDRESS = `0x${'5'.repeat(40)}`;

describe('dynamic_latency steering', () => {
  let anvil: AnvilNode;
  const proxies: Record<string, ProviderProxy> = {};
  let app: TestApp;

  before(async () => {
    anvil = await startTestAnvil();
    for (const [name, latencyMs] of [
      ['a', 40],
      ['b', 5],
      ['far', 40],
      ['near', 0],
    ] as const) {
      proxies[name] = await startProviderProxy(anvil.url, { latencyMs });
    }
    const origin = (name: string) => ({ name, address: (proxies[name] as ProviderProxy).url });
    app = await startApp({
      networks: {
        dyn: { chain_id: 11_155_111, pools: ['dyn'] },
        steered: { chain_id: 11_155_111, pools: ['far', 'near'], steering: 'dynamic_latency' },
        ordered: { chain_id: 11_155_111, pools: ['far', 'near'] },
      },
      pools: [
        { name: 'dyn', origins: [origin('a'), origin('b')], origin_steering: { policy: 'dynamic_latency' } },
        { name: 'far', origins: [origin('far')] },
        { name: 'near', origins: [origin('near')] },
      ],
      gateway: { steering_exploration: 0.2 },
    });
    await headsKnown(app.chain, 'dyn');
    await headsKnown(app.chain, 'steered');
  });
  after(async () => {
    await app?.close();
    await Promise.all(Object.values(proxies).map((proxy) => proxy.close()));
    await anvil?.stop();
  });

  /** `count` reads, `parallel` at a time; how many reached each of `names`. */
  async function run(network: string, count: number, names: readonly string[], parallel = 6) {
    const before = names.map((name) => (proxies[name] as ProviderProxy).calls('eth_getBalance'));
    let left = count;
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (left > 0) {
          left -= 1;
          const res = await post(
            app.rpcUrl(network),
            JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [ADDRESS, 'latest'] }),
          );
          assert.equal(res.status, 200, res.text);
        }
      }),
    );
    return Object.fromEntries(
      names.map((name, i) => [name, (proxies[name] as ProviderProxy).calls('eth_getBalance') - (before[i] as number)]),
    );
  }

  it('most calls go to the faster origin, some still explore, and a recovered origin wins traffic back', async () => {
    await run('dyn', 150, ['a', 'b']); // warm-up: both get scored
    const steady = await run('dyn', 300, ['a', 'b']);
    assert.ok((steady.b as number) >= 0.7 * 300, `the faster origin took ${steady.b} of 300`);
    assert.ok((steady.a as number) >= 1, 'the slower origin is still explored');
    // a recovers and b degrades: a's new answers (from exploration) bring its score below b's.
    (proxies.a as ProviderProxy).behaviour = { latencyMs: 0 };
    (proxies.b as ProviderProxy).behaviour = { latencyMs: 40 };
    const deadline = Date.now() + 40_000;
    let share = 0;
    while (share < 0.7) {
      assert.ok(Date.now() < deadline, `the recovered origin did not win traffic back (last share ${share})`);
      const round = await run('dyn', 200, ['a', 'b']);
      share = (round.a as number) / 200;
    }
  });

  it('networks.{name}.steering: dynamic_latency puts the pool with the best origin first; off keeps the order', async () => {
    await run('steered', 100, ['far', 'near']);
    const steered = await run('steered', 200, ['far', 'near']);
    assert.ok((steered.near as number) >= 0.7 * 200, `the faster pool took ${steered.near} of 200`);
    const ordered = await run('ordered', 50, ['far', 'near']);
    assert.deepEqual(ordered, { far: 50, near: 0 });
  });
});
