/**
 * Reload of the failsafe engine's settings (SPEC §15 with §17): a network's per-method rules
 * (`networks.NAME.methods`) and `hedge` are read by the origin forwarder per call, so a reload changes
 * them for the next call. One real anvil behind a provider proxy that stalls eth_getStorageAt for
 * STALL_MS; a client calls eth_blockNumber throughout each reload and none of its calls may fail.
 * - before: eth_getStorageAt waits out the stall and answers (request_timeout is 10 s);
 * - a reload giving it `timeout: 300ms, max_attempts: 1`: the next call gives up after 300 ms (504);
 * - a reload taking the rule away: it waits out the stall and answers again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { callsThroughout } from '../helpers/client-loop.js';
import { post } from '../helpers/http.js';
import { headsKnown, type ProviderProxy, startProviderProxy } from '../helpers/provider-proxy.js';

const STALL_MS = 1_500;
const ADDRESS = `0x${'6'.repeat(40)}`;

describe('reload: per-method rules of the failsafe engine', () => {
  let anvil: AnvilNode;
  let proxy: ProviderProxy;
  let app: TestApp;
  const file = (methods: Record<string, unknown>) => ({
    networks: { sepolia: { chain_id: 11_155_111, pools: ['main'], methods } },
    pools: [{ name: 'main', origins: [{ name: 'stalling', address: proxy.url }] }],
    gateway: { request_timeout: '10s' },
  });

  before(async () => {
    anvil = await startTestAnvil();
    proxy = await startProviderProxy(anvil.url, {
      stall: { fraction: 1, ms: STALL_MS },
      applies: (body) => body.includes('eth_getStorageAt'),
    });
    app = await startApp(file({}));
    await headsKnown(app.chain, 'sepolia');
  });
  after(async () => {
    await app?.close();
    await proxy?.close();
    await anvil?.stop();
  });

  const storage = async () => {
    const started = Date.now();
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_getStorageAt',
      params: [ADDRESS, '0x0', 'latest'],
    });
    const res = await post(app.rpcUrl('sepolia'), body);
    return { status: res.status, text: res.text, ms: Date.now() - started };
  };
  const reload = async (methods: Record<string, unknown>) => {
    const { result, failures } = await callsThroughout(app.rpcUrl('sepolia'), () => app.reloadWith(file(methods)));
    assert.deepEqual(failures, [], 'no call failed during the reload');
    assert.equal(result.ok, true);
  };

  it('a method timeout added, then taken away, applies from the next call', async () => {
    const waited = await storage();
    assert.equal(waited.status, 200, waited.text);
    assert.ok(waited.ms >= STALL_MS * 0.9, `eth_getStorageAt took ${waited.ms} ms`);

    await reload({ eth_getStorageAt: { timeout: '300ms', max_attempts: 1 } });
    const cut = await storage();
    assert.equal(cut.status, 504, cut.text);
    assert.ok(cut.ms < STALL_MS * 0.7, `eth_getStorageAt took ${cut.ms} ms`);

    await reload({});
    const again = await storage();
    assert.equal(again.status, 200, again.text);
  });
});
