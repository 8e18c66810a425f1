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
import WebSocket from 'ws';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { rpc, send } from '../helpers/http.js';

const ABI = parseAbi(['event Bump()']);
const TOPIC = toEventSelector('event Bump()');
// Runtime: PUSH32 TOPIC, PUSH1 0, PUSH1 0, LOG1, STOP (39 bytes); init code copies it and returns it.
const BYTECODE = `0x6027600c60003960276000f37f${TOPIC.slice(2)}60006000a100`;
const ROUNDS = 20;

type Json = Record<string, unknown>;
interface Receipt {
  blockNumber: string;
  transactionHash: string;
  contractAddress: string | null;
}

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
async function transact(to: string | undefined, data = '0x'): Promise<Receipt> {
  const tx = await rpc(node.url, 'eth_sendTransaction', [{ from, ...(to === undefined ? {} : { to }), data }]);
  assert.equal(tx.answer.error, undefined, JSON.stringify(tx.answer.error));
  let receipt: unknown = null;
  await until(async () => {
    receipt = (await rpc(node.url, 'eth_getTransactionReceipt', [tx.answer.result])).answer.result ?? null;
    return receipt !== null;
  }, 'the receipt');
  return receipt as Receipt;
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

/** A raw client: answers by id, notifications by subscription id. */
class Client {
  readonly notes = new Map<string, Json[]>();
  readonly #answers = new Map<number, (answer: Json) => void>();
  #id = 0;
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as Json;
      if (message.method === 'eth_subscription') {
        const params = message.params as { subscription: string; result: Json };
        this.notes.set(params.subscription, [...(this.notes.get(params.subscription) ?? []), params.result]);
      } else this.#answers.get(message.id as number)?.(message);
    });
  }
  static async open(): Promise<Client> {
    const ws = new WebSocket(wsUrl());
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new Client(ws);
  }
  async ask<T>(method: string, params: unknown[]): Promise<T> {
    const id = ++this.#id;
    const answer = await new Promise<Json>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method}`)), 10_000);
      this.#answers.set(id, (a) => {
        clearTimeout(timer);
        resolve(a);
      });
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
    assert.equal(answer.error, undefined, JSON.stringify(answer.error));
    return answer.result as T;
  }
  of(id: string): Json[] {
    return this.notes.get(id) ?? [];
  }
}

describe('a logs subscription made right after a block with matching logs', () => {
  it(`never receives that block's logs (${ROUNDS} rounds, new and shared sources)`, async () => {
    const contract = await deploy();
    const client = await Client.open();
    const companion = await Client.open();
    let held: string | undefined;
    for (let round = 0; round < ROUNDS; round++) {
      // From the middle on, another client holds the same filter: the new subscription joins its source.
      if (round === ROUNDS / 2) held = await companion.ask<string>('eth_subscribe', ['logs', { address: contract }]);
      const before = await transact(contract);
      const id = await client.ask<string>('eth_subscribe', ['logs', { address: contract }]);
      const next = await transact(contract);
      await until(
        () => client.of(id).some((log) => log.transactionHash === next.transactionHash),
        `round ${round}: the next block's log`,
      );
      assert.deepEqual(
        client.of(id).map((log) => log.transactionHash),
        [next.transactionHash],
        `round ${round}: only the log of the block after the subscription (not ${before.transactionHash})`,
      );
      assert.equal(await client.ask('eth_unsubscribe', [id]), true);
    }
    assert.ok(
      held !== undefined && companion.of(held).length === ROUNDS,
      'the companion got every log since it joined',
    );
    client.ws.close();
    companion.ws.close();
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
