/**
 * What health probes reveal reaches the chain tracker (SPEC §9): with head polling all but off (one poll at
 * start, then every hour) and no client traffic, a jsonrpc monitor's eth_blockNumber still moves the
 * tracker's head for the origin when its node mines. A real anvil node.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { rpc } from '../helpers/http.js';

let node: AnvilNode;
let app: TestApp;

before(async () => {
  node = await startTestAnvil();
  app = await startApp({
    networks: { sepolia: { chain_id: 11155111, pools: ['probed'], head_poll_interval: '1h' } },
    pools: [
      poolOf('probed', [node.url], {
        monitor: { type: 'jsonrpc', interval: 1, timeout: 1, consecutive_down: 1, consecutive_up: 1 },
      }),
    ],
  });
});

after(async () => {
  await app?.close();
  await node?.stop();
});

describe('probes feed the chain tracker', () => {
  it("moves an origin's head from the monitor's eth_blockNumber, without polls or traffic", async () => {
    const tracked = () => app.chain.trackedOrigins('sepolia')[0]?.state.head;
    const deadline = Date.now() + 5000;
    while (tracked() === undefined) {
      assert.ok(Date.now() < deadline, 'the first poll never came');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await rpc(node.url, 'anvil_mine', ['0x7']);
    const target = (tracked() as number) + 7;
    while (tracked() !== target) {
      assert.ok(Date.now() < deadline + 5000, `the tracker never saw block ${target} (at ${tracked()})`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
});
