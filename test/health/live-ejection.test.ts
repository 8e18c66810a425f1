/**
 * Live-traffic ejection through the real gateway (in-process app, one real local origin whose pool has a
 * jsonrpc monitor with a one-hour interval, so no scheduled check interferes; request_timeout 300 ms):
 * - one call that times out among answered ones does not take the origin out of rotation;
 * - three timeouts in a row do (the next call is 503), and the early confirmation probe — not the
 *   scheduled check, an hour away — brings it back about a second later.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from '../helpers/app.js';
import { TestOrigin } from './test-origin.js';

async function rpc(url: string, method: string): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      method,
      params: method === 'eth_getLogs' ? [{ fromBlock: '0x0', toBlock: '0x10' }] : [],
      id: 1,
    }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('live-traffic ejection through the gateway', () => {
  let origin: TestOrigin;
  let app: TestApp;
  let url: string;

  before(async () => {
    origin = await TestOrigin.start();
    origin.set({ hangMethods: ['eth_getLogs'] });
    app = await startApp({
      gateway: { request_timeout: '300ms' },
      networks: { sepolia: { chain_id: 11_155_111, pools: ['solo'] } },
      pools: [
        {
          name: 'solo',
          origins: [{ name: 'a', address: origin.url }],
          monitor: { type: 'jsonrpc', interval: 3600, timeout: 1, retries: 0 },
        },
      ],
    });
    url = app.rpcUrl('sepolia');
  });
  after(async () => {
    await app?.close();
    await origin.down();
  });

  it('one slow call among answered ones keeps the origin in rotation', async () => {
    assert.equal(await rpc(url, 'eth_blockNumber'), 200);
    assert.equal(await rpc(url, 'eth_getLogs'), 504, 'the slow call times out');
    for (let i = 0; i < 5; i++) assert.equal(await rpc(url, 'eth_blockNumber'), 200, 'still routed to');
  });

  it('three timeouts in a row eject it; the early confirmation probe brings it back', async () => {
    const statuses = await Promise.all([1, 2, 3].map(() => rpc(url, 'eth_getLogs')));
    assert.deepEqual(statuses, [504, 504, 504]);
    assert.equal(await rpc(url, 'eth_blockNumber'), 503, 'out of rotation: no healthy origin');
    const deadline = Date.now() + 15_000;
    while ((await rpc(url, 'eth_blockNumber')) !== 200) {
      assert.ok(Date.now() < deadline, 'the confirmation probe did not bring the origin back within 15 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
});
