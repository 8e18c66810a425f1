/**
 * Hedging through the gateway (SPEC §17 `networks.{name}.hedge`), with "provider" proxies in front of
 * one real anvil node: the first pool's origin stalls every client call (STALL_MS), the second answers
 * at once. Network `hedged` hedges after 100 ms, `plain` does not, `p90` hedges after the origin's p90.
 *   - a hedged read never waits out the stall: the second origin's answer comes first, and
 *     switchyard_hedges_total{outcome="won"} counts it; without hedging the stall reaches the client;
 *   - a write is never hedged: it reaches each origin at most once (the stalled one only);
 *   - filter calls are never hedged;
 *   - upstream batches are hedged like single calls, and their answers equal single calls';
 *   - a cancelled loser's connection is not leaked: it gets its whole answer (the connection then
 *     serves later calls) and nothing stays open once the gateway closes (sockets counted at the proxy).
 * Timings are bounds with a wide margin (the stall is STALL_MS; a hedged call must take well under it).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/devnet-chain.js';
import { fromChainTracker, post, type RpcAnswer, send } from '../helpers/http.js';
import { headsKnown, type ProviderProxy, startProviderProxy } from '../helpers/provider-proxy.js';

const STALL_MS = 2_500;
const ADDRESS = `0x${'4'.repeat(40)}`;

describe('hedged reads', () => {
  let anvil: AnvilNode;
  let slow: ProviderProxy;
  let fast: ProviderProxy;
  let app: TestApp;

  before(async () => {
    anvil = await startTestAnvil();
    slow = await startProviderProxy(anvil.url, { stall: { fraction: 1, ms: STALL_MS } });
    fast = await startProviderProxy(anvil.url);
    const pools = ['slow', 'fast'];
    app = await startApp({
      networks: {
        hedged: { chain_id: 11_155_111, pools, hedge: { after: '100ms' } },
        plain: { chain_id: 11_155_111, pools },
        p90: { chain_id: 11_155_111, pools, hedge: { after: 'p90' } },
      },
      pools: [
        { name: 'slow', origins: [{ name: 'stalling', address: slow.url }] },
        { name: 'fast', origins: [{ name: 'quick', address: fast.url }] },
      ],
      gateway: { request_timeout: '10s' },
    });
    await headsKnown(app.chain, 'hedged');
  });
  after(async () => {
    await app?.close();
    // Nothing is left open once the gateway is gone: no connection leaked.
    await waitFor(() => slow.sockets.open === 0, 'every connection to the stalling origin closed');
    await Promise.all([slow?.close(), fast?.close()]);
    await anvil?.stop();
  });

  const call = (network: string, method: string, params: unknown[] = [], id = 1) =>
    post(app.rpcUrl(network), JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  const timed = async (work: () => Promise<unknown>): Promise<number> => {
    const started = Date.now();
    await work();
    return Date.now() - started;
  };
  const hedges = async (outcome: string): Promise<number> => {
    const text = (await send(app.apiUrl.replace(/\/client\/v4$/, '/metrics'), { method: 'GET' })).text;
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`switchyard_hedges_total{network="hedged",outcome="${outcome}"}`));
    return Number(line?.split(' ')[1] ?? 0);
  };

  it('a hedged read never waits out the stall; the hedge wins', async () => {
    const direct = await post(
      anvil.url,
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [ADDRESS, 'latest'] }),
    );
    const wonBefore = await hedges('won');
    for (let i = 0; i < 8; i += 1) {
      let answer: RpcAnswer | undefined;
      const ms = await timed(async () => {
        answer = (await call('hedged', 'eth_getBalance', [ADDRESS, 'latest'], 1)).json<RpcAnswer>();
      });
      assert.deepEqual(answer, direct.json());
      assert.ok(ms < STALL_MS * 0.6, `call ${i} took ${ms} ms: the stall reached the client`);
    }
    assert.equal(slow.calls('eth_getBalance'), 8, 'each call went to the first origin first');
    assert.equal(fast.calls('eth_getBalance'), 8, 'and was hedged to the second');
    assert.equal((await hedges('won')) - wonBefore, 8);
  });

  it('without hedging the stall reaches the client', async () => {
    const ms = await timed(() => call('plain', 'eth_getBalance', [ADDRESS, 'latest']));
    assert.ok(ms >= STALL_MS * 0.9, `took ${ms} ms`);
  });

  it('a write is never hedged: it reaches each origin at most once', async () => {
    const before = { slow: slow.calls('eth_sendRawTransaction'), fast: fast.calls('eth_sendRawTransaction') };
    const res = await call('hedged', 'eth_sendRawTransaction', ['0x02']);
    assert.equal(res.status, 200, res.text);
    assert.equal(slow.calls('eth_sendRawTransaction') - before.slow, 1);
    assert.equal(fast.calls('eth_sendRawTransaction') - before.fast, 0);
  });

  it('filter calls are never hedged', async () => {
    const res = await call('hedged', 'eth_newBlockFilter');
    assert.equal(res.status, 200, res.text);
    assert.equal(fast.calls('eth_newBlockFilter'), 0);
  });

  it('an upstream batch is hedged too; its answers equal single calls', async () => {
    const calls = [
      { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [ADDRESS, 'latest'] },
      { jsonrpc: '2.0', id: 2, method: 'eth_getTransactionCount', params: [ADDRESS, 'latest'] },
    ];
    const singles = await Promise.all(
      calls.map(async (c) => (await post(anvil.url, JSON.stringify(c))).json<RpcAnswer>()),
    );
    let body: unknown;
    const ms = await timed(async () => {
      body = (await post(app.rpcUrl('hedged'), JSON.stringify(calls))).json();
    });
    assert.deepEqual(body, singles);
    assert.ok(ms < STALL_MS * 0.6, `the batch took ${ms} ms`);
    assert.ok(
      fast.requests.some((r) => r.batch),
      'the hedge went out as a batch',
    );
  });

  it('after: p90 waits 250 ms for an origin with fewer than 20 answers, then hedges', async () => {
    const before = fast.calls('eth_getCode');
    const ms = await timed(() => call('p90', 'eth_getCode', [ADDRESS, 'latest']));
    assert.equal(fast.calls('eth_getCode') - before, 1);
    assert.ok(ms >= 240 && ms < STALL_MS * 0.6, `took ${ms} ms`);
  });

  it("a cancelled loser's connection is not leaked: its answer is read whole, the connection serves again", async () => {
    const stalled = () => slow.requests.filter((r) => !fromChainTracker(r.body) && r.outcome === 'stalled').length;
    // Every stalled answer the gateway stopped waiting for arrives whole: none is cut.
    await waitFor(() => slow.counts.answered + slow.counts.cut >= stalled(), 'the stalled answers', 3 * STALL_MS);
    assert.equal(slow.counts.cut, 0, 'no loser connection was cut mid-answer');
    // Those connections went back to the pool: the calls that reach this origin now go out on them.
    const client = (r: { body: string }) => !fromChainTracker(r.body);
    const losers = new Set(slow.requests.filter((r) => client(r) && r.outcome === 'stalled').map((r) => r.socket));
    slow.behaviour = {};
    const seen = slow.requests.length;
    for (let i = 0; i < 5; i += 1)
      assert.equal((await call('plain', 'eth_getBalance', [ADDRESS, 'latest'])).status, 200);
    const later = slow.requests.slice(seen).filter(client);
    assert.equal(later.length, 5);
    assert.ok(
      later.every((r) => losers.has(r.socket)),
      `calls on sockets ${later.map((r) => r.socket)}; the losers' were ${[...losers]}`,
    );
  });
});
