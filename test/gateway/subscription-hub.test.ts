/**
 * The subscription hub (src/gateway/subscriptions/) against a real anvil behind a whole in-process
 * Switchyard: the app's chain tracker feeds it, and its upstream calls (eth_getLogs by block hash) go
 * through the gateway over HTTP (a Forwarder that posts the call's own bytes to POST /v1/sepolia).
 * A contract deployed from raw bytecode emits one LOG1 per call; each call is mined in its own block.
 *   - newHeads and logs arrive in order, block by block, matching the node's blocks and receipts;
 *   - after evm_revert and new blocks (a reorg), the new canonical heads come from the fork point on and
 *     the logs of the blocks that left the chain come again with `removed: true` and their old block hash.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../src/clock.js';
import type { Forwarder } from '../../src/gateway/rpc/forwarder.js';
import { SubscriptionHub, type SubscriptionSink } from '../../src/gateway/subscriptions/hub.js';
import { silentLogger } from '../../src/log.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { post, rpc } from '../helpers/http.js';

const TOPIC = `0x${'5e'.repeat(32)}`;
// Runtime: PUSH32 TOPIC, PUSH1 0, PUSH1 0, LOG1, STOP (39 bytes); init code copies it and returns it.
const RUNTIME = `7f${TOPIC.slice(2)}60006000a100`;
const BYTECODE = `0x6027600c60003960276000f3${RUNTIME}`;

async function waitFor(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

class Collector implements SubscriptionSink {
  readonly results: Array<Record<string, unknown>> = [];
  send(notification: string): void {
    const parsed = JSON.parse(notification) as { params: { result: Record<string, unknown> } };
    this.results.push(parsed.params.result);
  }
}

/** The gateway itself as the hub's Forwarder: the call's own bytes, POSTed. */
function gatewayForwarder(url: string): Forwarder {
  return {
    async forward(request) {
      const res = await post(url, request.call.raw);
      return { body: Buffer.from(res.text), id: undefined, pool: 'p', origin: 'o' };
    },
  };
}

let node: AnvilNode;
let app: TestApp;
let hub: SubscriptionHub;
let from: string;

async function send(
  to: string | undefined,
  data: string,
): Promise<{ blockNumber: string; blockHash: string; contractAddress: string | null }> {
  const tx = await rpc(node.url, 'eth_sendTransaction', [
    { from, ...(to === undefined ? {} : { to }), data, gas: '0x30000' },
  ]);
  assert.equal(tx.answer.error, undefined, JSON.stringify(tx.answer.error));
  let receipt: unknown = null;
  const deadline = Date.now() + 10_000;
  while (receipt === null) {
    if (Date.now() > deadline) throw new Error('no receipt');
    receipt = (await rpc(node.url, 'eth_getTransactionReceipt', [tx.answer.result])).answer.result ?? null;
    if (receipt === null) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return receipt as { blockNumber: string; blockHash: string; contractAddress: string | null };
}

before(async () => {
  node = await startTestAnvil();
  app = await startApp({
    networks: { sepolia: { chain_id: 11155111, pools: ['p'], head_poll_interval: '50ms' } },
    pools: [poolOf('p', [node.url])],
  });
  hub = new SubscriptionHub({
    chain: app.chain,
    forwarder: gatewayForwarder(app.rpcUrl()),
    networks: app.config.networks,
    clock: systemClock,
    logger: silentLogger,
  });
  from = ((await rpc(node.url, 'eth_accounts')).answer.result as string[])[0] as string;
});
after(async () => {
  hub?.close();
  await app?.close();
  await node?.stop();
});

describe('the subscription hub on a real anvil', () => {
  it('sends heads and logs in order, and on a reorg the new heads from the fork point and the removed logs', async () => {
    const deployed = await send(undefined, BYTECODE);
    const contract = deployed.contractAddress as string;
    assert.match(contract, /^0x[0-9a-f]{40}$/);
    const deployedAt = Number(deployed.blockNumber);
    await waitFor(() => app.chain.canonicalHead('sepolia')?.number === deployedAt, 'the tracker at the deploy block');

    const heads = new Collector();
    const logs = new Collector();
    hub.subscribe('sepolia', ['newHeads'], heads);
    // A logs subscription starts after the head when it is answered: the blocks below come after it.
    await hub.subscribe('sepolia', ['logs', { address: contract, topics: [[TOPIC]] }], logs);
    const snapshot = (await rpc(node.url, 'evm_snapshot')).answer.result as string;

    const receipts = [await send(contract, '0x'), await send(contract, '0x'), await send(contract, '0x')];
    await waitFor(() => logs.results.length === 3, 'three logs');
    assert.deepEqual(
      logs.results.map((log) => [log.blockNumber, log.blockHash, log.address, log.removed]),
      receipts.map((r) => [r.blockNumber, r.blockHash, contract, false]),
    );
    await waitFor(() => heads.results.length >= 3, 'three heads');
    assert.deepEqual(
      heads.results.slice(0, 3).map((h) => [h.number, h.hash]),
      receipts.map((r) => [r.blockNumber, r.blockHash]),
    );
    assert.ok(
      heads.results.every((h) => !('transactions' in h) && !('uncles' in h) && !('size' in h) && !('withdrawals' in h)),
    );

    // A reorg: back to before the three calls, then four empty blocks.
    await rpc(node.url, 'evm_revert', [snapshot]);
    await rpc(node.url, 'anvil_mine', ['0x4']);
    const forkPoint = deployedAt + 1;
    await waitFor(() => logs.results.length === 6, 'three removed logs');
    assert.deepEqual(
      logs.results.slice(3).map((log) => [log.blockNumber, log.blockHash, log.removed]),
      receipts.map((r) => [r.blockNumber, r.blockHash, true]),
    );
    await waitFor(() => heads.results.some((h) => Number(h.number) === deployedAt + 4), 'the new branch');
    const after = heads.results.slice(3).map((h) => Number(h.number));
    assert.deepEqual(after, [forkPoint, forkPoint + 1, forkPoint + 2, forkPoint + 3], 'from the fork point on');
    for (const head of heads.results.slice(3)) {
      const onNode = (await rpc(node.url, 'eth_getBlockByNumber', [head.number, false])).answer.result as {
        hash: string;
      };
      assert.equal(head.hash, onNode.hash);
    }
  });
});
