/**
 * Per-method rules through the gateway (SPEC §17 `networks.{name}.methods`), with "provider" proxies in
 * front of one real anvil node: the first pool's origin stalls every client call for STALL_MS, the
 * second answers at once.
 *   - `hedge: off` for one method of a hedged network: that method waits out the stall, others are hedged;
 *   - `timeout`: the method's attempts give up after it (then the next origin answers);
 *   - `max_attempts`: the method is tried on that many origins only;
 *   - a `namespace_*` pattern covers its methods, and an exact name wins over it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { post, type RpcAnswer } from '../helpers/http.js';
import { headsKnown, type ProviderProxy, startProviderProxy } from '../helpers/provider-proxy.js';

const STALL_MS = 2_000;
const ADDRESS = `0x${'6'.repeat(40)}`;

describe('per-method rules', () => {
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
        hedged: {
          chain_id: 11_155_111,
          pools,
          hedge: { after: '100ms' },
          methods: {
            eth_getCode: { hedge: 'off' },
            eth_getStorageAt: { timeout: '300ms', hedge: 'off' },
            eth_getTransactionCount: { timeout: '300ms', max_attempts: 1, hedge: 'off' },
          },
        },
        patterns: {
          chain_id: 11_155_111,
          pools,
          methods: { 'eth_*': { timeout: '300ms', max_attempts: 1 }, eth_getBalance: { timeout: '300ms' } },
        },
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
    await Promise.all([slow?.close(), fast?.close()]);
    await anvil?.stop();
  });

  const timedCall = async (network: string, method: string, params: unknown[]) => {
    const started = Date.now();
    const res = await post(app.rpcUrl(network), JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
    return { res, ms: Date.now() - started };
  };

  it('hedge: off waits out the stall for that method while the network hedges the others', async () => {
    const code = await timedCall('hedged', 'eth_getCode', [ADDRESS, 'latest']);
    assert.equal(code.res.status, 200, code.res.text);
    assert.ok(code.ms >= STALL_MS * 0.9, `eth_getCode took ${code.ms} ms`);
    assert.equal(fast.calls('eth_getCode'), 0);
    const balance = await timedCall('hedged', 'eth_getBalance', [ADDRESS, 'latest']);
    assert.ok(balance.ms < STALL_MS * 0.6, `eth_getBalance took ${balance.ms} ms`);
    assert.equal(fast.calls('eth_getBalance'), 1);
  });

  it("timeout: the method's attempt gives up after it and the next origin answers", async () => {
    const storage = await timedCall('hedged', 'eth_getStorageAt', [ADDRESS, '0x0', 'latest']);
    assert.equal(storage.res.status, 200, storage.res.text);
    assert.equal(typeof storage.res.json<RpcAnswer>().result, 'string');
    assert.ok(storage.ms < STALL_MS * 0.6, `took ${storage.ms} ms`);
    assert.equal(fast.calls('eth_getStorageAt'), 1);
  });

  it('max_attempts: the method is tried on that many origins only', async () => {
    const count = await timedCall('hedged', 'eth_getTransactionCount', [ADDRESS, 'latest']);
    assert.equal(count.res.status, 504, count.res.text);
    assert.equal(fast.calls('eth_getTransactionCount'), 0);
  });

  it('a namespace_* pattern covers its methods; an exact name wins over it', async () => {
    const code = await timedCall('patterns', 'eth_getProof', [ADDRESS, [], 'latest']);
    assert.equal(code.res.status, 504, code.res.text);
    assert.equal(fast.calls('eth_getProof'), 0);
    const before = fast.calls('eth_getBalance');
    const balance = await timedCall('patterns', 'eth_getBalance', [ADDRESS, 'latest']);
    assert.equal(balance.res.status, 200, balance.res.text);
    assert.equal(fast.calls('eth_getBalance'), before + 1);
  });
});
