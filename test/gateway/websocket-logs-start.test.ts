/**
 * A new logs subscription starts at the next block (SPEC §20), against a real anvil and a whole
 * in-process Switchyard whose chain tracker polls every 200 ms (2 s for the client libraries) — so a
 * block mined just before the subscription is usually not polled yet when it is answered (the race this
 * guards against):
 *   - raw `ws` client, 20 rounds: a block with a matching log is mined (its receipt read from the node),
 *     a logs subscription is made at once, another matching block is mined; the subscription gets the
 *     later block's log only. Half the rounds start a new source, half join one another client holds;
 *   - viem `watchContractEvent` and ethers `contract.on` over WebSocket after reading the history with
 *     eth_getLogs: every event once — history 1, 2, 3, then the subscription 4, 5, no duplicate.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Contract, WebSocketProvider } from 'ethers';
import { createPublicClient, parseAbi, toEventSelector, webSocket } from 'viem';
import { type AnvilNode, type MinedReceipt, startTestAnvil, transactAt } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { rpc, send } from '../helpers/http.js';
import { WsRpcClient } from '../helpers/ws-client.js';

const ABI = parseAbi(['event Bump()']);
const TOPIC = toEventSelector('event Bump()');
// Runtime: PUSH32 TOPIC, PUSH1 0, PUSH1 0, LOG1, STOP (39 bytes); init code copies it and returns it.
const BYTECODE = `0x6027600c60003960276000f37f${TOPIC.slice(2)}60006000a100`;
const ROUNDS = 20;

let node: AnvilNode;
let app: TestApp;
let from: string;

before(async () => {
  node = await startTestAnvil();
  app = await startApp({
    networks: { sepolia: { chain_id: 11155111, pools: ['p'], head_poll_interval: '200ms' } },
    pools: [poolOf('p', [node.url])],
  });
  from = ((await rpc(node.url, 'eth_accounts')).answer.result as string[])[0] as string;
});
after(async () => {
  await app?.close();
  await node?.stop();
});

const wsUrl = () => app.rpcUrl().replace(/^http/, 'ws');

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A transaction straight at the node (anvil mines it in its own block); its receipt, read from the node. */
function transact(to: string | undefined, data = '0x'): Promise<MinedReceipt> {
  return transactAt(node.url, { from, to, data });
}

async function deploy(): Promise<`0x${string}`> {
  return (await transact(undefined, BYTECODE)).contractAddress as `0x${string}`;
}

async function logsSubscriptions(of: TestApp): Promise<number> {
  const res = await send(of.apiUrl.replace(/\/client\/v4$/, '/metrics'), { method: 'GET' });
  const series = 'switchyard_gateway_ws_subscriptions{kind="logs"} ';
  const line = res.text.split('\n').find((l) => l.startsWith(series));
  return line === undefined ? 0 : Number(line.slice(series.length));
}

describe('a logs subscription made right after a block with matching logs', () => {
  it(`never receives that block's logs (${ROUNDS} rounds, new and shared sources)`, async () => {
    const contract = await deploy();
    const client = await WsRpcClient.open(wsUrl());
    const companion = await WsRpcClient.open(wsUrl());
    let held: string | undefined;
    for (let round = 0; round < ROUNDS; round++) {
      // From the middle on, another client holds the same filter: the new subscription joins its source.
      if (round === ROUNDS / 2) held = await companion.result<string>('eth_subscribe', ['logs', { address: contract }]);
      const before = await transact(contract);
      const id = await client.result<string>('eth_subscribe', ['logs', { address: contract }]);
      const next = await transact(contract);
      await until(
        () => client.results(id).some((log) => log.transactionHash === next.transactionHash),
        `round ${round}: the next block's log`,
      );
      assert.deepEqual(
        client.results(id).map((log) => log.transactionHash),
        [next.transactionHash],
        `round ${round}: only the log of the block after the subscription (not ${before.transactionHash})`,
      );
      assert.equal(await client.result('eth_unsubscribe', [id]), true);
    }
    assert.ok(
      held !== undefined && companion.results(held).length === ROUNDS,
      'the companion got every log since it joined',
    );
    client.close();
    companion.close();
  });
});

describe('history read with eth_getLogs, then a subscription: every event once', () => {
  // Heads polled every 2 s: the history's blocks are not polled yet when the client subscribes.
  let slow: TestApp;
  before(async () => {
    slow = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['p'], head_poll_interval: '2s' } },
      pools: [poolOf('p', [node.url])],
    });
  });
  after(async () => {
    await slow?.close();
  });
  const slowUrl = () => slow.rpcUrl().replace(/^http/, 'ws');

  it('viem watchContractEvent (poll: false): history 1, 2, 3, then 4, 5 from the subscription', async () => {
    await until(async () => (await logsSubscriptions(slow)) === 0, 'no logs subscription left');
    const address = await deploy();
    const client = createPublicClient({ transport: webSocket(slowUrl()) });
    try {
      const early = [await transact(address), await transact(address), await transact(address)];
      const history = await client.getContractEvents({ address, abi: ABI, eventName: 'Bump', fromBlock: 0n });
      assert.deepEqual(
        history.map((log) => log.transactionHash),
        early.map((r) => r.transactionHash),
      );
      const seen: string[] = [];
      const errors: Error[] = [];
      const unwatch = client.watchContractEvent({
        address,
        abi: ABI,
        eventName: 'Bump',
        poll: false,
        onLogs: (logs) => seen.push(...logs.map((log) => log.transactionHash as string)),
        onError: (err) => errors.push(err),
      });
      await until(async () => (await logsSubscriptions(slow)) === 1, 'the subscription answered');
      const later = [await transact(address), await transact(address)];
      await until(() => seen.includes(later[1]?.transactionHash as string), 'the last event');
      assert.deepEqual(
        seen,
        later.map((r) => r.transactionHash),
      );
      assert.deepEqual(errors, []);
      unwatch();
    } finally {
      (await client.transport.getRpcClient()).close();
    }
  });

  it('ethers contract.on over WebSocketProvider: history 1, 2, 3 from queryFilter, then 4, 5 from the subscription', async () => {
    await until(async () => (await logsSubscriptions(slow)) === 0, 'no logs subscription left');
    const address = await deploy();
    const provider = new WebSocketProvider(slowUrl());
    try {
      const contract = new Contract(address, ['event Bump()'], provider);
      const early = [await transact(address), await transact(address), await transact(address)];
      const history = await contract.queryFilter('Bump', 0);
      assert.deepEqual(
        history.map((log) => log.transactionHash),
        early.map((r) => r.transactionHash),
      );
      const seen: string[] = [];
      await contract.on('Bump', (payload: { log: { transactionHash: string } }) => {
        seen.push(payload.log.transactionHash);
      });
      await until(async () => (await logsSubscriptions(slow)) === 1, 'the subscription answered');
      const later = [await transact(address), await transact(address)];
      await until(() => seen.includes(later[1]?.transactionHash as string), 'the last event');
      assert.deepEqual(
        seen,
        later.map((r) => r.transactionHash),
      );
      await contract.removeAllListeners();
    } finally {
      await provider.destroy();
    }
  });
});
