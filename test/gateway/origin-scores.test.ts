/**
 * Origin scores (SPEC §17) as an operator sees them, with "provider" proxies in front of one real anvil:
 *   - after traffic, `switchyard_origin_score{network,pool,origin}` holds each origin's expected latency in
 *     seconds, and the origin stats API its score: p50/p90 of the decaying window, error and throttle
 *     ratios, and value = p90 × (1 + 4 × error ratio + 4 × throttle ratio);
 *   - monitor probes count in the score, and a probe answered 429 counts neither up nor down: the
 *     origin keeps its health (while a probe answered 500 takes it down, so the probes do run).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ApiFixture, startApiFixture } from '../api/setup.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { waitFor } from '../helpers/devnet-chain.js';
import { fromChainTracker, post, send } from '../helpers/http.js';
import { headsKnown, type ProviderProxy, startProviderProxy } from '../helpers/provider-proxy.js';

const ADDRESS = `0x${'7'.repeat(40)}`;
const rpcMonitor = { type: 'jsonrpc', interval: 1, timeout: 1, retries: 0, consecutive_down: 1, consecutive_up: 1 };

interface Score {
  value: number;
  p50_ms: number | null;
  p90_ms: number | null;
  error_ratio: number;
  throttle_ratio: number;
  samples: number;
}

describe('origin scores', () => {
  let anvil: AnvilNode;
  let steady: ProviderProxy;
  let flaky: ProviderProxy;
  let watched: ProviderProxy;
  let fx: ApiFixture;

  before(async () => {
    anvil = await startTestAnvil();
    steady = await startProviderProxy(anvil.url, { latencyMs: 20 });
    flaky = await startProviderProxy(anvil.url);
    watched = await startProviderProxy(anvil.url);
    fx = await startApiFixture({
      networks: {
        scorenet: { chain_id: 11_155_111, pools: ['scored'] },
        watchnet: { chain_id: 11_155_111, pools: ['watched'] },
      },
      pools: [
        {
          name: 'scored',
          origins: [
            { name: 'steady', address: steady.url },
            { name: 'flaky', address: flaky.url },
          ],
        },
        { name: 'watched', origins: [{ name: 'probed', address: watched.url }], monitor: rpcMonitor },
      ],
    });
    await headsKnown(fx.app.chain, 'scorenet');
  });
  after(async () => {
    await fx?.close();
    await Promise.all([steady, flaky, watched].map((proxy) => proxy?.close()));
    await anvil?.stop();
  });

  async function originStats(): Promise<
    Array<{ pool_name: string; origin_name: string; healthy: boolean; failure_reason: string; score: Score | null }>
  > {
    const res = await fx.call('GET', `/accounts/${fx.accountId}/load_balancers/origin_stats?per_page=100`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.result as never;
  }
  const of = async (origin: string) => (await originStats()).find((o) => o.origin_name === origin);

  it('switchyard_origin_score and the origin stats API show each origin score', async () => {
    // flaky answers half its client calls 429: its throttle ratio grows (the read goes on to steady).
    flaky.behaviour = { throttle: { fraction: 0.5 }, applies: (body) => !fromChainTracker(body) };
    for (let i = 0; i < 60; i += 1) {
      const res = await post(
        fx.app.rpcUrl('scorenet'),
        JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [ADDRESS, 'latest'] }),
      );
      assert.equal(res.status, 200, res.text);
    }
    const steadyScore = (await of('steady'))?.score;
    assert.ok(steadyScore !== null && steadyScore !== undefined, 'steady has a score');
    assert.ok((steadyScore.p90_ms ?? 0) >= 15, `p90 ${steadyScore.p90_ms} ms with 20 ms added per call`);
    assert.ok((steadyScore.p50_ms ?? 0) <= (steadyScore.p90_ms ?? 0));
    assert.equal(steadyScore.error_ratio, 0);
    assert.ok(Math.abs(steadyScore.value - (steadyScore.p90_ms ?? 0) / 1000) < 1e-3, JSON.stringify(steadyScore));
    const flakyScore = (await of('flaky'))?.score;
    assert.ok(
      flakyScore !== null && flakyScore !== undefined && flakyScore.throttle_ratio > 0,
      JSON.stringify(flakyScore),
    );
    const expected =
      ((flakyScore.p90_ms ?? 1000) / 1000) * (1 + 4 * flakyScore.error_ratio + 4 * flakyScore.throttle_ratio);
    assert.ok(Math.abs(flakyScore.value - expected) / expected < 0.01, `${flakyScore.value} vs ${expected}`);

    const text = (await send(fx.app.apiUrl.replace(/\/client\/v4$/, '/metrics'), { method: 'GET' })).text;
    const line = text
      .split('\n')
      .find((l) => l.startsWith('switchyard_origin_score{network="scorenet",pool="scored",origin="steady"}'));
    assert.ok(line !== undefined, 'the metric has a series for the origin');
    const value = Number(line.split(' ')[1]);
    assert.ok(Math.abs(value - steadyScore.value) < 0.01, `metric ${value}, API ${steadyScore.value}`);
    assert.ok(!text.includes(steady.url), 'no address in the metrics');
  });

  it('a probe answered 429 counts neither up nor down; its outcome goes into the score', async () => {
    // (The monitored pool's proxy sees only probes and the chain tracker's polls: no client calls.)
    await waitFor(async () => {
      const probed = await of('probed');
      return probed?.healthy === true && probed.failure_reason === 'No failures';
    }, 'the monitored origin checked Healthy');
    watched.behaviour = { throttle: { fraction: 1 } };
    await waitFor(async () => /rate limited/.test((await of('probed'))?.failure_reason ?? ''), 'a throttled check');
    // Three more rounds (interval 1 s, consecutive_down 1): a failed check would have taken it down.
    const checks = watched.calls();
    await waitFor(async () => watched.calls() >= checks + 3, 'three more rounds');
    const probed = await of('probed');
    assert.equal(probed?.healthy, true, 'throttled checks keep the origin healthy');
    assert.ok((probed?.score?.throttle_ratio ?? 0) > 0, JSON.stringify(probed?.score));
    // An error answer is a failed check: the monitor really runs.
    watched.behaviour = { refuse: { match: () => true, code: -32000, message: 'broken' } };
    await waitFor(async () => (await of('probed'))?.healthy === false, 'the origin checked Unhealthy');
    watched.behaviour = {};
  });
});
