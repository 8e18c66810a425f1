/**
 * newHeads pushes (SPEC §9) from a real anvil node's WebSocket endpoint:
 *   - the gateway's push client (gateway/upstream/ws-heads.ts) subscribes, says when the push is live,
 *     hands on every new head in order, and stops when told;
 *   - an address the outbound policy refuses is never connected to;
 *   - through the whole app, an origin with a `ws_address` has its head moved by the push while head
 *     polling is all but off (once at start, then hourly) and nothing else asks the node.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebSocketServer } from 'ws';
import type { BlockHead } from '../../src/chain/types.js';
import { WsHeadSubscriptions } from '../../src/gateway/upstream/ws-heads.js';
import { silentLogger } from '../../src/log.js';
import { OutboundPolicy } from '../../src/outbound/policy.js';
import { poolFromConfig } from '../../src/routing/static-directory.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { rpc } from '../helpers/http.js';

const ACCOUNT = '5317c4a1d00d5317c4a1d00d5317c4a1';

async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let node: AnvilNode;
before(async () => {
  node = await startTestAnvil();
});
after(() => node?.stop());

function originPool(wsAddress: string) {
  const pool = poolFromConfig(
    { name: 'pushed', origins: [{ name: 'o0', address: node.url }] },
    ACCOUNT,
    '2026-01-01T00:00:00.000Z',
  );
  return { ...pool, origins: pool.origins.map((origin) => ({ ...origin, ws_address: wsAddress })) };
}

describe('the newHeads push client', () => {
  it('goes live, hands on each new head in order, and stops', async () => {
    const policy = new OutboundPolicy({ trustedAccounts: [ACCOUNT] });
    const pushes = new WsHeadSubscriptions({
      guard: policy.connectGuard(policy.rulesFor(ACCOUNT)),
      logger: silentLogger,
      timeoutMs: 5000,
    });
    const pool = originPool(node.url.replace('http://', 'ws://'));
    const heads: BlockHead[] = [];
    let live = false;
    const stop = pushes.subscribe(pool, pool.origins[0] as (typeof pool.origins)[number], {
      head: (header) => heads.push(header),
      live: (up) => {
        live = up;
      },
    });
    try {
      await waitFor(() => live, 'the subscription to go live');
      const start = Number((await rpc(node.url, 'eth_blockNumber')).answer.result);
      await rpc(node.url, 'anvil_mine', ['0x3']);
      await waitFor(() => heads.length >= 3, 'three pushed heads');
      assert.deepEqual(
        heads.map((h) => h.number),
        [start + 1, start + 2, start + 3],
      );
      const tip = (await rpc(node.url, 'eth_getBlockByNumber', ['latest', false])).answer.result as { hash: string };
      assert.equal(heads[2]?.hash, tip.hash);
    } finally {
      stop();
    }
    await rpc(node.url, 'anvil_mine', ['0x1']);
    await new Promise((resolve) => setTimeout(resolve, 200)); // nothing may arrive after stop
    assert.equal(heads.length, 3);
  });

  it('never connects to an address the outbound policy refuses', async () => {
    const policy = new OutboundPolicy({ trustedAccounts: [] }); // loopback refused for everyone
    const pushes = new WsHeadSubscriptions({
      guard: policy.connectGuard(policy.rulesFor(ACCOUNT)),
      logger: silentLogger,
      timeoutMs: 5000,
    });
    const pool = originPool(node.url.replace('http://', 'ws://'));
    let live = false;
    const stop = pushes.subscribe(pool, pool.origins[0] as (typeof pool.origins)[number], {
      head: () => undefined,
      live: (up) => {
        live = up;
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 1500)); // the first attempt and its retry
    stop();
    assert.equal(live, false);
  });
});

describe('the header map on the push', () => {
  it("goes with the push only when ws_address names the address's host (header secrets stay with their destination)", async () => {
    const seen: Array<string | undefined> = [];
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    server.on('connection', (socket, request) => {
      seen.push(request.headers['x-api-key'] as string | undefined);
      socket.on('message', () => socket.send('{"jsonrpc":"2.0","id":"switchyard-chain","result":"0x1"}'));
    });
    await new Promise((resolve) => server.once('listening', resolve));
    const port = (server.address() as { port: number }).port;
    const policy = new OutboundPolicy({ trustedAccounts: [ACCOUNT] });
    const pushes = new WsHeadSubscriptions({
      guard: policy.connectGuard(policy.rulesFor(ACCOUNT)),
      logger: silentLogger,
      timeoutMs: 5000,
    });
    try {
      for (const wsAddress of [`ws://127.0.0.1:${port}`, `ws://localhost:${port}`]) {
        const pool = originPool(wsAddress);
        const origin = { ...(pool.origins[0] as (typeof pool.origins)[number]), header: { 'X-Api-Key': ['secret-1'] } };
        let live = false;
        const stop = pushes.subscribe(pool, origin, {
          head: () => undefined,
          live: (up) => {
            live = up;
          },
        });
        await waitFor(() => live, `the push from ${wsAddress}`);
        stop();
      }
      assert.deepEqual(seen, ['secret-1', undefined]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('pushed heads in the tracker', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['pushed'], head_poll_interval: '1h' } },
      pools: [
        {
          name: 'pushed',
          origins: [{ name: 'o0', address: node.url, ws_address: node.url.replace('http://', 'ws://') }],
        },
      ],
    });
  });
  after(() => app?.close());

  it("moves the origin's head from the push, with polling all but off", async () => {
    const state = () => app.chain.trackedOrigins('sepolia')[0]?.state;
    await waitFor(() => state()?.head !== undefined, 'the first head');
    await new Promise((resolve) => setTimeout(resolve, 300)); // let the subscription go live (no signal outside)
    const target = (state()?.head as number) + 4;
    await rpc(node.url, 'anvil_mine', ['0x4']);
    await waitFor(() => state()?.head === target, `head ${target} from the push`);
    assert.equal(
      state()?.hash,
      ((await rpc(node.url, 'eth_getBlockByNumber', ['latest', false])).answer.result as { hash: string }).hash,
    );
  });
});
