/**
 * Throttling through the gateway (SPEC §17), with "provider" proxies in front of one real anvil node
 * (test/helpers/provider-proxy.ts): each network lists a throttling provider's pool first and a plain
 * one second, so the first attempt always meets the throttling.
 *   - HTTP 429 with Retry-After: the read goes on to the next origin; the origin is benched for that long
 *     (no call reaches it meanwhile) and keeps its health; then it takes traffic again;
 *   - a provider's rate-limit answer (Infura's -32005 "daily request count exceeded") is throttling too,
 *     but -32005 "query returned more than 10000 results" is an answer and passes through;
 *   - every origin throttled: 429 UPSTREAM_THROTTLED with Retry-After;
 *   - a write meeting a rate-limit answer is not resent and the answer passes through;
 *   - origins[].max_requests_per_second: at its cap the origin is skipped, not waited on, and the cap
 *     round-trips through the API;
 *   - batches: a 429 sends the upstream batch on; an element answered with a rate-limit error goes out
 *     again on its own; per-element answers equal single calls.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { type ApiFixture, startApiFixture } from '../api/setup.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { waitFor } from '../helpers/devnet-chain.js';
import { fromChainTracker, post, type RpcAnswer } from '../helpers/http.js';
import { headsKnown, type ProviderProxy, startProviderProxy } from '../helpers/provider-proxy.js';

const clientCalls = (body: string) => !fromChainTracker(body);
const INFURA_DAILY = { fraction: 1, code: -32005, message: 'daily request count exceeded, request rate limited' };

describe('throttling: 429s, rate-limit answers, max_requests_per_second', () => {
  let anvil: AnvilNode;
  let limited: ProviderProxy;
  let plain: ProviderProxy;
  let capped: ProviderProxy;
  let fx: ApiFixture;

  before(async () => {
    anvil = await startTestAnvil();
    limited = await startProviderProxy(anvil.url);
    plain = await startProviderProxy(anvil.url);
    capped = await startProviderProxy(anvil.url);
    fx = await startApiFixture({
      networks: {
        sepolia: { chain_id: 11_155_111, pools: ['limited', 'plain'] },
        capnet: { chain_id: 11_155_111, pools: ['capped', 'plain'] },
      },
      pools: [
        { name: 'limited', origins: [{ name: 'provider', address: limited.url }] },
        { name: 'plain', origins: [{ name: 'node', address: plain.url }] },
        { name: 'capped', origins: [{ name: 'paid', address: capped.url, max_requests_per_second: 5 }] },
      ],
    });
    // Head-relative reads go first to origins whose head is known: wait until all are, so the
    // configured order decides which origin a read meets first.
    await headsKnown(fx.app.chain, 'sepolia');
    await headsKnown(fx.app.chain, 'capnet');
  });
  after(async () => {
    await fx?.close();
    await Promise.all([limited, plain, capped].map((proxy) => proxy?.close()));
    await anvil?.stop();
  });
  beforeEach(() => {
    limited.behaviour = {};
  });

  const call = (method = 'eth_blockNumber', network = 'sepolia', params: unknown[] = []) =>
    post(`${fx.app.gatewayUrl}/v1/${network}`, JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }));

  async function providerHealthy(): Promise<boolean> {
    const list = await fx.call('GET', `/accounts/${fx.accountId}/load_balancers/pools?per_page=100`);
    const pool = (list.body.result as Array<{ name: string; origins: Array<{ healthy: boolean }> }>).find(
      (p) => p.name === 'limited',
    );
    return pool?.origins[0]?.healthy === true;
  }

  it('a 429 sends the read on and benches the origin for its Retry-After, without touching its health', async () => {
    limited.behaviour = { throttle: { fraction: 1, retryAfter: '1' }, applies: clientCalls };
    const first = await call();
    assert.equal(first.status, 200, first.text);
    assert.equal(limited.calls('eth_blockNumber'), 1);
    // Benched: the next reads go straight to the plain origin.
    for (let i = 0; i < 5; i += 1) assert.equal((await call()).status, 200);
    assert.equal(limited.calls('eth_blockNumber'), 1, 'a benched origin gets no call');
    assert.equal(await providerHealthy(), true, 'throttling never counts against health');
    // After its Retry-After (1 s) the origin takes traffic again — not after a health ejection (10 s).
    limited.behaviour = {};
    await waitFor(
      async () => {
        await call();
        return limited.calls('eth_blockNumber') > 1;
      },
      'the benched origin taking a call again',
      5_000,
    );
  });

  it("a provider's rate-limit answer is throttling; -32005 'query returned more than 10000 results' is an answer", async () => {
    limited.behaviour = { rateLimitAnswer: INFURA_DAILY, applies: clientCalls };
    const before = plain.calls('eth_gasPrice');
    const res = await call('eth_gasPrice');
    assert.equal(res.status, 200, res.text);
    assert.equal(typeof res.json<RpcAnswer>().result, 'string', res.text);
    assert.equal(plain.calls('eth_gasPrice'), before + 1);
    // Benched for the default second: wait it out, then the same code with another message passes through.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    limited.behaviour = {
      refuse: { match: (m) => m === 'eth_getLogs', code: -32005, message: 'query returned more than 10000 results' },
      applies: clientCalls,
    };
    const logs = await call('eth_getLogs', 'sepolia', [{ fromBlock: '0x0', toBlock: '0x0' }]);
    assert.equal(logs.status, 200);
    assert.deepEqual(logs.json<RpcAnswer>().error, { code: -32005, message: 'query returned more than 10000 results' });
  });

  it('every origin throttled: 429 UPSTREAM_THROTTLED with Retry-After', async () => {
    limited.behaviour = { throttle: { fraction: 1, retryAfter: '3' }, applies: clientCalls };
    plain.behaviour = { throttle: { fraction: 1, retryAfter: '2' }, applies: clientCalls };
    try {
      const res = await call('eth_getBalance', 'sepolia', [`0x${'1'.repeat(40)}`, 'latest']);
      assert.equal(res.status, 429, res.text);
      assert.equal(res.json<RpcAnswer>().error?.code, -32005);
      assert.equal(res.headers['retry-after'], '2');
      // Both benched now: the next read is refused at once, without reaching either.
      const before = limited.requests.length + plain.requests.length;
      const again = await call('eth_getBalance', 'sepolia', [`0x${'1'.repeat(40)}`, 'latest']);
      assert.equal(again.status, 429);
      assert.equal(limited.requests.length + plain.requests.length, before);
    } finally {
      plain.behaviour = {};
    }
    await new Promise((resolve) => setTimeout(resolve, 3_100));
  });

  it("a write that meets a rate-limit answer is not resent; the provider's answer passes through", async () => {
    limited.behaviour = { rateLimitAnswer: INFURA_DAILY, applies: clientCalls };
    const before = plain.calls('eth_sendRawTransaction');
    const res = await call('eth_sendRawTransaction', 'sepolia', ['0x02']);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json<RpcAnswer>().error, { code: INFURA_DAILY.code, message: INFURA_DAILY.message });
    assert.equal(plain.calls('eth_sendRawTransaction'), before, 'never resent');
    await new Promise((resolve) => setTimeout(resolve, 1_100));
  });

  it('max_requests_per_second: at its cap the origin is skipped, not waited on', async () => {
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 30 }, () => call('eth_blockNumber', 'capnet')));
    const seconds = (Date.now() - started) / 1000;
    assert.ok(results.every((r) => r.status === 200));
    const paid = capped.calls('eth_blockNumber');
    // A burst of one second's worth (5), then 5 a second.
    assert.ok(paid >= 5 && paid <= 5 + Math.ceil(5 * seconds), `the capped origin took ${paid} in ${seconds} s`);
    assert.ok(plain.calls('eth_blockNumber') >= 30 - paid);
  });

  it('max_requests_per_second round-trips through the API', async () => {
    const list = await fx.call('GET', `/accounts/${fx.accountId}/load_balancers/pools?per_page=100`);
    const pool = (
      list.body.result as Array<{ id: string; name: string; origins: Array<Record<string, unknown>> }>
    ).find((p) => p.name === 'capped');
    assert.equal(pool?.origins[0]?.max_requests_per_second, 5);
    const patched = await fx.call('PATCH', `/accounts/${fx.accountId}/load_balancers/pools/${pool?.id}`, {
      body: { origins: [{ name: 'paid', address: capped.url, max_requests_per_second: 2.5 }] },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const read = await fx.call('GET', `/accounts/${fx.accountId}/load_balancers/pools/${pool?.id}`);
    const origin = (read.body.result as { origins: Array<Record<string, unknown>> }).origins[0];
    assert.equal(origin?.max_requests_per_second, 2.5);
    const bad = await fx.call('PATCH', `/accounts/${fx.accountId}/load_balancers/pools/${pool?.id}`, {
      body: { origins: [{ name: 'paid', address: capped.url, max_requests_per_second: 0 }] },
    });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.body.errors), /max_requests_per_second/);
    const none = await fx.call('PATCH', `/accounts/${fx.accountId}/load_balancers/pools/${pool?.id}`, {
      body: { origins: [{ name: 'paid', address: capped.url }] },
    });
    assert.equal(
      (none.body.result as { origins: Array<Record<string, unknown>> }).origins[0]?.max_requests_per_second,
      undefined,
    );
  });

  it('batches: a 429 sends the batch on; rate-limited elements go out alone; answers equal single calls', async () => {
    const calls = [
      { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', id: 2, method: 'eth_getBalance', params: [`0x${'2'.repeat(40)}`, 'latest'] },
      { jsonrpc: '2.0', id: 3, method: 'eth_getBlockByNumber', params: ['0x0', false] },
    ];
    const singles = await Promise.all(
      calls.map(async (c) => (await post(`${fx.app.gatewayUrl}/v1/sepolia`, JSON.stringify(c))).json<RpcAnswer>()),
    );
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    limited.behaviour = { throttle: { fraction: 1 }, applies: clientCalls };
    const whole = await post(`${fx.app.gatewayUrl}/v1/sepolia`, JSON.stringify(calls));
    assert.equal(whole.status, 200, whole.text);
    assert.deepEqual(whole.json(), singles);
    assert.ok(
      limited.requests.some((r) => r.batch && r.outcome === 'throttled'),
      'the batch met the 429 first',
    );
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    // Every element answered with a rate-limit error by the first origin (QuickNode caps a batch's
    // calls per second that way): they go out again one by one.
    limited.behaviour = {
      rateLimitAnswer: { fraction: 1, code: 429, message: 'Too many requests', methods: ['eth_getBalance'] },
      applies: clientCalls,
    };
    const partly = await post(`${fx.app.gatewayUrl}/v1/sepolia`, JSON.stringify(calls));
    assert.equal(partly.status, 200, partly.text);
    assert.deepEqual(partly.json(), singles);
    assert.ok(
      limited.requests.some((r) => r.batch && r.outcome === 'rate-limited'),
      'some elements were rate-limited',
    );
  });
});
