/**
 * Real clients on the gateway's WebSocket endpoint (SPEC §10, issue 16): viem's `webSocket` transport and
 * ethers v6's `WebSocketProvider`, against a whole in-process Switchyard (its real subscription hub, fed by
 * its chain tracker polling a real anvil every 50 ms). A contract deployed from raw bytecode emits one LOG1
 * per call; anvil mines one block per transaction, so each call is its own block.
 *   - viem: getBlockNumber, watchBlockNumber, watchBlocks and watchEvent with `poll: false` (eth_subscribe
 *     over the socket, checked on /metrics: one newHeads/logs subscription while watching, none after);
 *     the block numbers, blocks and logs the node mined arrive in order, each once; after a reorg
 *     (anvil_reorg) the log of the block that left comes again with `removed: true`.
 *   - ethers: on('block') and on(filter) — the same, and a reorg's block heard again; `destroy()` ends the
 *     provider and the process lives on.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebSocketProvider } from 'ethers';
import { createPublicClient, type Log, webSocket } from 'viem';
import { watchBlockNumber } from 'viem/actions';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { send as httpSend, rpc } from '../helpers/http.js';

const TOPIC = `0x${'5e'.repeat(32)}`;
// Runtime: PUSH32 TOPIC, PUSH1 0, PUSH1 0, LOG1, STOP (39 bytes); init code copies it and returns it.
const RUNTIME = `7f${TOPIC.slice(2)}60006000a100`;
const BYTECODE = `0x6027600c60003960276000f3${RUNTIME}`;

interface Receipt {
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  contractAddress: string | null;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let node: AnvilNode;
let app: TestApp;
let from: string;
let contract: string;

/** A transaction straight at the node (anvil mines it in its own block, a moment later); its receipt. */
async function transact(to: string | undefined, data: string): Promise<Receipt> {
  const tx = await rpc(node.url, 'eth_sendTransaction', [
    { from, ...(to === undefined ? {} : { to }), data, gas: '0x30000' },
  ]);
  assert.equal(tx.answer.error, undefined, JSON.stringify(tx.answer.error));
  let receipt: unknown = null;
  const deadline = Date.now() + 10_000;
  while (receipt === null) {
    if (Date.now() > deadline) throw new Error('no receipt within 10 s');
    receipt = (await rpc(node.url, 'eth_getTransactionReceipt', [tx.answer.result])).answer.result ?? null;
    if (receipt === null) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return receipt as Receipt;
}

/** The node's head number now. */
async function nodeHead(): Promise<number> {
  return Number((await rpc(node.url, 'eth_blockNumber')).answer.result);
}

/** Waits until the gateway's canonical chain is at the node's head (so no older head is still to come). */
async function trackerAtNode(): Promise<number> {
  const head = await nodeHead();
  await waitFor(() => app.chain.canonicalHead('sepolia')?.number === head, `the tracker at block ${head}`);
  return head;
}

/** One gauge/counter value from the API listener's /metrics (0 when the series is absent). */
async function metric(series: string): Promise<number> {
  const res = await httpSend(app.apiUrl.replace(/\/client\/v4$/, '/metrics'), { method: 'GET' });
  const line = res.text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

/** What this test reads of ethers' socket (Node's WebSocket or `ws`: both have addEventListener). */
interface WebSocketLike {
  addEventListener(event: 'message', listener: (message: { data: unknown }) => void): void;
}

const wsUrl = (): string => app.rpcUrl().replace(/^http/, 'ws');

before(async () => {
  node = await startTestAnvil();
  app = await startApp({
    networks: { sepolia: { chain_id: 11155111, pools: ['p'], head_poll_interval: '50ms' } },
    pools: [poolOf('p', [node.url])],
  });
  from = ((await rpc(node.url, 'eth_accounts')).answer.result as string[])[0] as string;
  const deployed = await transact(undefined, BYTECODE);
  contract = deployed.contractAddress as string;
  assert.match(contract, /^0x[0-9a-f]{40}$/);
});
after(async () => {
  await app?.close();
  await node?.stop();
});

describe("viem's webSocket transport", () => {
  it('getBlockNumber answers the node head', async () => {
    const client = createPublicClient({ transport: webSocket(wsUrl()) });
    try {
      await transact(contract, '0x');
      const head = await trackerAtNode();
      assert.equal(await client.getBlockNumber({ cacheTime: 0 }), BigInt(head));
    } finally {
      (await client.transport.getRpcClient()).close();
    }
  });

  it('watchBlockNumber and watchBlocks (poll: false) get every mined block once, in order, by eth_subscribe', async () => {
    const client = createPublicClient({ transport: webSocket(wsUrl()) });
    try {
      const start = await trackerAtNode();
      const numbers: bigint[] = [];
      const blocks: Array<{ number: bigint | null; hash: string | null }> = [];
      const errors: Error[] = [];
      // The action itself: the client's decorator types `poll` as true-only whatever the transport.
      const unwatchNumbers = watchBlockNumber(client, {
        poll: false,
        onBlockNumber: (n) => {
          numbers.push(n);
        },
        onError: (err) => {
          errors.push(err);
        },
      });
      const unwatchBlocks = client.watchBlocks({
        poll: false,
        onBlock: (block) => blocks.push({ number: block.number, hash: block.hash }),
        onError: (err) => errors.push(err),
      });
      // Both watchers share viem's one socket; the gateway counts their two newHeads subscriptions.
      await waitForMetric('switchyard_gateway_ws_subscriptions{kind="newHeads"}', 2);
      const inBefore = await metric('switchyard_gateway_ws_messages_in_total');

      const receipts: Receipt[] = [];
      for (let i = 0; i < 5; i++) receipts.push(await transact(contract, '0x'));
      await rpc(node.url, 'anvil_mine', ['0x3']);
      const end = await nodeHead();
      assert.equal(end, start + 8);
      await waitFor(() => numbers.at(-1) === BigInt(end), 'the last block at watchBlockNumber');

      const expected = Array.from({ length: end - start }, (_, i) => BigInt(start + 1 + i));
      assert.deepEqual(numbers, expected, 'watchBlockNumber: each block once, in order');
      // watchBlocks fetches each head's block (eth_getBlockByNumber) and calls onBlock when that answer
      // arrives, so its order is the order of those answers, which the gateway (like geth) sends as they
      // are ready: each block once, whatever the order.
      await waitFor(() => blocks.length === expected.length, 'every block at watchBlocks');
      assert.deepEqual(
        blocks.map((b) => b.number).sort((a, b) => Number((a ?? 0n) - (b ?? 0n))),
        expected,
        'watchBlocks: each block once',
      );
      for (const block of blocks) {
        const onNode = (await rpc(node.url, 'eth_getBlockByNumber', [`0x${block.number?.toString(16)}`, false])).answer
          .result as { hash: string };
        assert.equal(block.hash, onNode.hash);
      }
      const hashes = new Map(blocks.map((b) => [b.number, b.hash]));
      assert.deepEqual(
        receipts.map((r) => r.blockHash),
        receipts.map((r) => hashes.get(BigInt(r.blockNumber))),
      );
      assert.deepEqual(errors, []);
      // Subscriptions, not polling: while eight blocks came in, viem sent only watchBlocks' one
      // eth_getBlockByNumber per head (no eth_blockNumber polls).
      assert.equal(await metric('switchyard_gateway_ws_messages_in_total'), inBefore + expected.length);

      unwatchNumbers();
      unwatchBlocks();
      await waitForMetric('switchyard_gateway_ws_subscriptions{kind="newHeads"}', 0);
    } finally {
      (await client.transport.getRpcClient()).close();
    }
  });

  it("watchEvent (poll: false) gets the contract's logs once each, in order, by eth_subscribe logs", async () => {
    const client = createPublicClient({ transport: webSocket(wsUrl()) });
    try {
      await trackerAtNode();
      const logs: Log[] = [];
      const errors: Error[] = [];
      const unwatch = client.watchEvent({
        address: contract as `0x${string}`,
        poll: false,
        onLogs: (batch) => logs.push(...batch),
        onError: (err) => errors.push(err),
      });
      await waitForMetric('switchyard_gateway_ws_subscriptions{kind="logs"}', 1);
      const inBefore = await metric('switchyard_gateway_ws_messages_in_total');
      const receipts: Receipt[] = [];
      for (let i = 0; i < 4; i++) {
        receipts.push(await transact(contract, '0x'));
        // A block without a log of ours in between: it must bring nothing.
        await rpc(node.url, 'anvil_mine', ['0x1']);
      }
      // A last log: the source handles blocks in order, so a repeat of an earlier one would come before it.
      receipts.push(await transact(contract, '0x'));
      await waitFor(() => logs.some((log) => log.transactionHash === receipts[4]?.transactionHash), 'the last log');
      assert.deepEqual(
        logs.map((log) => [
          log.blockNumber,
          log.blockHash,
          log.transactionHash,
          log.address,
          log.topics[0],
          log.removed,
        ]),
        receipts.map((r) => [BigInt(r.blockNumber), r.blockHash, r.transactionHash, contract, TOPIC, false]),
      );
      assert.equal(await metric('switchyard_gateway_ws_messages_in_total'), inBefore, 'no polling: viem sent nothing');
      // A reorg replaces the last block (anvil_reorg, depth 1, no transactions): its log comes again,
      // removed, with the hash of the block that left.
      await rpc(node.url, 'anvil_reorg', [1, []]);
      await waitFor(() => logs.length === 6, 'the removed log');
      const last = receipts[4] as Receipt;
      assert.deepEqual(
        [logs[5]?.blockNumber, logs[5]?.blockHash, logs[5]?.transactionHash, logs[5]?.removed],
        [BigInt(last.blockNumber), last.blockHash, last.transactionHash, true],
      );
      assert.deepEqual(errors, []);
      unwatch();
      await waitForMetric('switchyard_gateway_ws_subscriptions{kind="logs"}', 0);
    } finally {
      (await client.transport.getRpcClient()).close();
    }
  });
});

describe("ethers v6's WebSocketProvider", () => {
  it("on('block') and on(filter) get every block and log once, in order; destroy() leaves the process alive", async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown): void => {
      uncaught.push(err);
    };
    process.on('uncaughtException', onUncaught);
    const provider = new WebSocketProvider(wsUrl()); // as docs/websocket.md shows it: the network detected
    try {
      const start = await trackerAtNode();
      assert.equal((await provider.getNetwork()).chainId, 11155111n);
      assert.equal(await provider.getBlockNumber(), start);
      const blocks: number[] = [];
      const logs: Array<{ blockNumber: number; blockHash: string; transactionHash: string; removed: boolean }> = [];
      await provider.on('block', (n: number) => {
        blocks.push(n);
      });
      await provider.on({ address: contract, topics: [TOPIC] }, (log) => {
        logs.push(log);
      });
      await waitForMetric('switchyard_gateway_ws_subscriptions{kind="newHeads"}', 1);
      await waitForMetric('switchyard_gateway_ws_subscriptions{kind="logs"}', 1);
      const inBefore = await metric('switchyard_gateway_ws_messages_in_total');

      const receipts: Receipt[] = [];
      for (let i = 0; i < 3; i++) {
        receipts.push(await transact(contract, '0x'));
        await rpc(node.url, 'anvil_mine', ['0x1']);
      }
      receipts.push(await transact(contract, '0x')); // the last log: a repeat would come before it
      const end = start + 7;
      await waitFor(
        () => blocks.at(-1) === end && logs.at(-1)?.transactionHash === receipts[3]?.transactionHash,
        'the last block and the last log',
      );
      assert.deepEqual(
        blocks,
        Array.from({ length: 7 }, (_, i) => start + 1 + i),
        "on('block'): each block once, in order",
      );
      assert.deepEqual(
        logs.map((log) => [log.blockNumber, log.blockHash, log.transactionHash, log.removed]),
        receipts.map((r) => [Number(r.blockNumber), r.blockHash, r.transactionHash, false]),
        'on(filter): each log once, in order',
      );
      assert.equal(
        await metric('switchyard_gateway_ws_messages_in_total'),
        inBefore,
        'no polling: ethers sent nothing',
      );
      // A reorg replaces the last block: on('block') hears its number again (the new block). The log of
      // the block that left comes again on the socket with removed: true and the old block's hash; ethers
      // routes such a log to its "orphan" events, not to the filter's listener.
      const removed: Array<Record<string, unknown>> = [];
      (provider.websocket as unknown as WebSocketLike).addEventListener('message', (message) => {
        const parsed = JSON.parse(String(message.data)) as { params?: { result?: Record<string, unknown> } };
        if (parsed.params?.result?.removed === true) removed.push(parsed.params.result);
      });
      await rpc(node.url, 'anvil_reorg', [1, []]);
      await waitFor(() => blocks.length === 8 && removed.length === 1, 'the new block and the removed log');
      assert.equal(blocks[7], end);
      const last = receipts[3] as Receipt;
      assert.deepEqual(
        [removed[0]?.blockNumber, removed[0]?.blockHash, removed[0]?.transactionHash],
        [`0x${end.toString(16)}`, last.blockHash, last.transactionHash],
      );
      assert.equal(logs.length, 4, 'the filter listener does not take the removed log for a new one');
      await provider.removeAllListeners();
      await waitForMetric('switchyard_gateway_ws_subscriptions{kind="newHeads"}', 0);
      await waitForMetric('switchyard_gateway_ws_subscriptions{kind="logs"}', 0);
    } finally {
      await provider.destroy();
      process.off('uncaughtException', onUncaught);
    }
    // The socket is closed and nothing was thrown out of ethers.
    await waitForMetric('switchyard_gateway_ws_connections', 0);
    assert.deepEqual(uncaught, []);
  });
});

async function waitForMetric(series: string, value: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let seen = await metric(series);
  while (seen !== value) {
    if (Date.now() > deadline) throw new Error(`${series} stayed ${seen}, not ${value}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    seen = await metric(series);
  }
}
