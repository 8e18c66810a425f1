/**
 * The subscription guarantees of SPEC §10 through the gateway's WebSocket endpoint, a raw `ws` client and
 * the real subscription hub, against real anvil nodes:
 *   - subscriptions survive the death of the origin the chain tracker follows: two anvil nodes of one chain
 *     (same genesis; block n mined on each with the same transactions at the same explicit timestamp, so
 *     the hashes match — checked at every height), one pool with both. The leader (ChainTracker.leader) is
 *     killed by PID, blocks go on on the survivor, and the newHeads received are consecutive across the
 *     kill, each once, with the chain's hashes; the logs come block by block, each once. With the survivor
 *     in step, or two blocks behind when the leader dies (it then mines the same two); with the heads
 *     polled (`head_poll_interval` 50 ms) or pushed (the origins' `ws_address` newHeads).
 *   - a reorg (`anvil_reorg` at the same height, or `evm_revert` to a shorter branch) yields the new heads
 *     from the fork point on, and the logs of the blocks that left the chain again with `removed: true`
 *     and the hash of the block that left; then the chain goes on from the new branch. Polled and pushed.
 *   - the leader dies holding blocks the survivor never gets: the survivor's own branch comes with its
 *     first block (heads from the fork point, the dead branch's logs removed), not LEADER_MARGIN later.
 *   - a burst of 50 blocks between two polls is back-filled by number: each head once, in order.
 */
import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import WebSocket from 'ws';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { rpc } from '../helpers/http.js';

const GENESIS = 1_700_000_000;
const TOPIC = `0x${'5e'.repeat(32)}`;
// Runtime: PUSH32 TOPIC, PUSH1 0, PUSH1 0, LOG1, STOP (39 bytes); init code copies it and returns it.
const RUNTIME = `7f${TOPIC.slice(2)}60006000a100`;
const BYTECODE = `0x6027600c60003960276000f3${RUNTIME}`;

type Json = Record<string, unknown>;

async function waitFor(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function call<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const { answer } = await rpc(url, method, params);
  assert.equal(answer.error, undefined, `${method}: ${JSON.stringify(answer.error)}`);
  return answer.result as T;
}

/** A raw WebSocket client: answers by id, notifications by subscription id. */
class Client {
  readonly ws: WebSocket;
  readonly notes = new Map<string, Json[]>();
  readonly #answers = new Map<number, (answer: Json) => void>();
  #id = 0;

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as Json;
      if (message.method === 'eth_subscription') {
        const params = message.params as { subscription: string; result: Json };
        const list = this.notes.get(params.subscription) ?? [];
        list.push(params.result);
        this.notes.set(params.subscription, list);
        return;
      }
      this.#answers.get(message.id as number)?.(message);
    });
  }

  static async open(url: string): Promise<Client> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return new Client(ws);
  }

  async ask<T>(method: string, params: unknown[] = []): Promise<T> {
    const id = ++this.#id;
    const answer = await new Promise<Json>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method} within 10 s`)), 10_000);
      this.#answers.set(id, (a) => {
        clearTimeout(timer);
        resolve(a);
      });
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
    this.#answers.delete(id);
    assert.equal(answer.error, undefined, `${method}: ${JSON.stringify(answer.error)}`);
    return answer.result as T;
  }

  /** The notifications of one subscription so far (a live list). */
  of(id: string): Json[] {
    let list = this.notes.get(id);
    if (list === undefined) {
      list = [];
      this.notes.set(id, list);
    }
    return list;
  }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
after(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Nodes of one chain: same genesis, and block n mined on each node with the same transactions (the same
 * signed bytes: anvil signs deterministically) at the same timestamp, so every node has the same hash at
 * every height (checked as each block is mined).
 */
class LockStep {
  readonly nodes: AnvilNode[];
  /** height → hash, as the first node to mine that height made it. */
  readonly hashes = new Map<number, string>();
  readonly #heights = new Map<AnvilNode, number>();
  #nonce = 0;

  constructor(nodes: AnvilNode[]) {
    this.nodes = nodes;
    for (const node of nodes) this.#heights.set(node, 0);
  }

  get height(): number {
    return Math.max(...this.#heights.values());
  }

  /**
   * Mines `count` blocks on every node in `on`, each at its own next heights, 12 s apart; a height in
   * `txs` gets that transaction first (the same one on every node that mines that height).
   */
  async mine(count: number, on: readonly AnvilNode[] = this.nodes, txs = new Map<number, Json>()): Promise<void> {
    for (const node of on) {
      for (let i = 0; i < count; i++) {
        const height = (this.#heights.get(node) ?? 0) + 1;
        const tx = txs.get(height);
        if (tx !== undefined) await call(node.url, 'eth_sendTransaction', [tx]);
        await call(node.url, 'evm_mine', [{ timestamp: GENESIS + height * 12 }]);
        const block = await call<{ number: string; hash: string }>(node.url, 'eth_getBlockByNumber', ['latest', false]);
        assert.equal(Number(block.number), height);
        const known = this.hashes.get(height);
        if (known === undefined) this.hashes.set(height, block.hash);
        else assert.equal(block.hash, known, `block ${height}: one hash on every node`);
        this.#heights.set(node, height);
      }
    }
  }

  /**
   * Mines `count` empty blocks on `node` alone, each 1 s later than its lock-step timestamp: a branch no
   * other node has. They become the chain's blocks at those heights; their hashes are returned.
   */
  async branch(node: AnvilNode, count: number): Promise<string[]> {
    const hashes: string[] = [];
    for (let i = 0; i < count; i++) {
      const height = (this.#heights.get(node) ?? 0) + 1;
      await call(node.url, 'evm_mine', [{ timestamp: GENESIS + height * 12 + 1 }]);
      const block = await call<{ number: string; hash: string }>(node.url, 'eth_getBlockByNumber', ['latest', false]);
      assert.equal(Number(block.number), height);
      this.hashes.set(height, block.hash);
      this.#heights.set(node, height);
      hashes.push(block.hash);
    }
    return hashes;
  }

  /** A transaction every node signs alike: explicit nonce, gas and fees. */
  tx(from: string, to: string | undefined, data: string): Json {
    const nonce = this.#nonce++;
    return {
      from,
      ...(to === undefined ? {} : { to }),
      data,
      nonce: `0x${nonce.toString(16)}`,
      gas: '0x30000',
      maxFeePerGas: '0x174876e800',
      maxPriorityFeePerGas: '0x1',
      chainId: '0xaa36a7',
    };
  }
}

interface PairSetup {
  readonly nodes: AnvilNode[];
  readonly chain: LockStep;
  readonly app: TestApp;
  readonly heads: Json[];
  readonly logs: Json[];
  /** One call of the contract (one log) in each of these blocks. */
  calls(heights: number[]): Map<number, Json>;
}

/**
 * Two anvil nodes of one chain at block 2 (the contract deployed in block 1), one pool `pair` with both
 * (heads polled every 50 ms, or pushed from their ws_address), a client subscribed to newHeads and to the
 * contract's logs.
 */
async function pairSetup(feed: 'polled' | 'pushed'): Promise<PairSetup> {
  const nodes = await Promise.all([
    startTestAnvil({ noMining: true, timestamp: GENESIS }),
    startTestAnvil({ noMining: true, timestamp: GENESIS }),
  ]);
  cleanups.push(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
  });
  const chain = new LockStep(nodes);
  const from = (await call<string[]>(nodes[0]?.url as string, 'eth_accounts'))[0] as string;
  await chain.mine(2, nodes, new Map([[1, chain.tx(from, undefined, BYTECODE)]]));
  const deploy = await call<Json>(nodes[0]?.url as string, 'eth_getBlockByNumber', ['0x1', true]);
  const deployTx = (deploy.transactions as Json[])[0] as Json;
  const contract = (await call<Json>(nodes[0]?.url as string, 'eth_getTransactionReceipt', [deployTx.hash]))
    .contractAddress as string;
  const calls = (heights: number[]): Map<number, Json> =>
    new Map(heights.map((height) => [height, chain.tx(from, contract, '0x')]));

  const app = await startApp({
    networks: { sepolia: { chain_id: 11155111, pools: ['pair'], head_poll_interval: '50ms' } },
    pools: [
      {
        name: 'pair',
        origins: nodes.map((node, i) => ({
          name: `o${i}`,
          address: node.url,
          ...(feed === 'pushed' ? { ws_address: node.url.replace(/^http/, 'ws') } : {}),
        })),
      },
    ],
  });
  cleanups.push(() => app.close());
  await waitFor(() => app.chain.canonicalHead('sepolia')?.number === 2, 'the tracker at block 2');
  if (feed === 'pushed') {
    await waitFor(() => app.chain.trackedOrigins('sepolia').every((t) => t.pushing), 'both origins pushing heads');
  }
  const client = await Client.open(wsUrl(app));
  cleanups.push(() => client.close());
  const heads = client.of(await client.ask<string>('eth_subscribe', ['newHeads']));
  const logs = client.of(await client.ask<string>('eth_subscribe', ['logs', { address: contract }]));
  return { nodes, chain, app, heads, logs, calls };
}

describe('subscriptions across the death of the origin feeding them', () => {
  for (const feed of ['polled', 'pushed'] as const) {
    for (const survivorState of ['in step', 'behind'] as const) {
      it(`no missed and no repeated head or log when the leader dies (heads ${feed}, survivor ${survivorState})`, async () => {
        const { nodes, chain, app, heads, logs, calls } = await pairSetup(feed);

        await chain.mine(3, nodes, calls([3, 4, 5]));
        await waitFor(() => heads.length === 3 && logs.length === 3, 'three heads and logs before the kill');
        const leader = app.chain.leader('sepolia');
        assert.ok(leader !== undefined, 'the tracker follows one origin');
        const index = Number(leader.origin.name.slice(1));
        const [dead, survivor] = [nodes[index] as AnvilNode, nodes[1 - index] as AnvilNode];

        // Two more blocks on the leader (and on the survivor too, or not yet), then the leader dies at once
        // (SIGKILL by PID) while its heads may still be on their way; more blocks come on the survivor only
        // (the same two first when it was behind).
        const twoMore = calls([6, 7]);
        await chain.mine(2, survivorState === 'in step' ? nodes : [dead], twoMore);
        dead.killNow();
        await dead.exited;
        const rest = new Map([...(survivorState === 'in step' ? [] : twoMore), ...calls([9, 12])]);
        await chain.mine(survivorState === 'in step' ? 8 : 10, [survivor], rest);
        assert.equal(chain.height, 15);
        // One more block with a log: anything repeated or late would have come before it.
        await chain.mine(1, [survivor], calls([16]));
        await waitFor(
          () => Number(heads.at(-1)?.number) === 16 && Number(logs.at(-1)?.blockNumber) === 16,
          `the last head and log (heads ${heads.map((h) => Number(h.number))}, logs ${logs.map((l) => Number(l.blockNumber))})`,
        );

        assert.deepEqual(
          heads.map((head) => Number(head.number)),
          Array.from({ length: 14 }, (_, i) => 3 + i),
          'heads consecutive, each once, across the kill',
        );
        assert.deepEqual(
          heads.map((head) => head.hash),
          heads.map((head) => chain.hashes.get(Number(head.number))),
        );
        assert.deepEqual(
          logs.map((log) => [Number(log.blockNumber), log.blockHash, log.removed]),
          [3, 4, 5, 6, 7, 9, 12, 16].map((n) => [n, chain.hashes.get(n), false]),
          'logs block by block, each once, across the kill',
        );
        assert.notEqual(app.chain.leader('sepolia')?.origin.name, leader.origin.name, 'the survivor leads now');
      });
    }
  }
});

describe('the leader dies holding blocks the survivor never gets', () => {
  for (const feed of ['polled', 'pushed'] as const) {
    it(`the survivor's branch comes with its first block: heads from the fork point, removed logs (heads ${feed})`, async () => {
      const { nodes, chain, app, heads, logs, calls } = await pairSetup(feed);
      await chain.mine(3, nodes, calls([3, 4, 5]));
      await waitFor(() => heads.length === 3 && logs.length === 3, 'three heads and logs');
      const leader = app.chain.leader('sepolia');
      assert.ok(leader !== undefined, 'the tracker follows one origin');
      const index = Number(leader.origin.name.slice(1));
      const [dead, survivor] = [nodes[index] as AnvilNode, nodes[1 - index] as AnvilNode];

      // Blocks 6 and 7 (a log each) on the leader only, delivered; then it dies.
      await chain.mine(2, [dead], calls([6, 7]));
      const gone = [chain.hashes.get(6), chain.hashes.get(7)];
      await waitFor(() => heads.length === 5 && logs.length === 5, "the leader's blocks 6 and 7");
      dead.killNow();
      await dead.exited;

      // The survivor mines its own block 6: the chain moves to it now, not LEADER_MARGIN blocks later.
      const [own6] = await chain.branch(survivor, 1);
      await waitFor(() => heads.length === 6, "the survivor's block 6 as a head", 5_000);
      await waitFor(() => logs.length === 7, 'the two removed logs');
      const [own7, own8] = await chain.branch(survivor, 2);
      await waitFor(() => heads.length === 8, 'two more heads');

      assert.deepEqual(
        heads.map((head) => [Number(head.number), head.hash]),
        [
          ...[3, 4, 5].map((n) => [n, chain.hashes.get(n)]),
          [6, gone[0]],
          [7, gone[1]],
          [6, own6],
          [7, own7],
          [8, own8],
        ],
        "the dead leader's heads, then the survivor's branch from the fork point on",
      );
      assert.deepEqual(
        logs.map((log) => [Number(log.blockNumber), log.blockHash, log.removed]),
        [
          ...[3, 4, 5].map((n) => [n, chain.hashes.get(n), false]),
          [6, gone[0], false],
          [7, gone[1], false],
          [6, gone[0], true],
          [7, gone[1], true],
        ],
        'the logs of the blocks that left, again with removed: true',
      );
      assert.equal(app.chain.leader('sepolia')?.origin.name, `o${1 - index}`, 'the survivor leads');
    });
  }
});

interface ReorgSetup {
  readonly node: AnvilNode;
  readonly app: TestApp;
  readonly contract: string;
  readonly heads: Json[];
  readonly logs: Json[];
  transact(to: string | undefined, data: string): Promise<Json>;
}

/** One anvil (automining) behind the gateway, a contract deployed, a client subscribed to heads and logs. */
async function reorgSetup(feed: 'polled' | 'pushed'): Promise<ReorgSetup> {
  const node = await startTestAnvil();
  cleanups.push(() => node.stop());
  const app = await startApp({
    networks: { sepolia: { chain_id: 11155111, pools: ['p'], head_poll_interval: '50ms' } },
    pools: [
      {
        name: 'p',
        origins: [
          {
            name: 'o0',
            address: node.url,
            ...(feed === 'pushed' ? { ws_address: node.url.replace(/^http/, 'ws') } : {}),
          },
        ],
      },
    ],
  });
  cleanups.push(() => app.close());
  if (feed === 'pushed') {
    await waitFor(() => app.chain.trackedOrigins('sepolia').every((t) => t.pushing), 'the origin pushing');
  }
  const from = (await call<string[]>(node.url, 'eth_accounts'))[0] as string;
  const transact = async (to: string | undefined, data: string): Promise<Json> => {
    const hash = await call<string>(node.url, 'eth_sendTransaction', [
      { from, ...(to === undefined ? {} : { to }), data, gas: '0x30000' },
    ]);
    let receipt: Json | null = null;
    const deadline = Date.now() + 10_000;
    while (receipt === null) {
      if (Date.now() > deadline) throw new Error('no receipt within 10 s');
      receipt = await call<Json | null>(node.url, 'eth_getTransactionReceipt', [hash]);
      if (receipt === null) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return receipt;
  };
  const contract = (await transact(undefined, BYTECODE)).contractAddress as string;
  const deployedAt = Number(await call<string>(node.url, 'eth_blockNumber'));
  await waitFor(() => app.chain.canonicalHead('sepolia')?.number === deployedAt, 'the tracker at the deploy');
  const client = await Client.open(wsUrl(app));
  cleanups.push(() => client.close());
  const heads = client.of(await client.ask<string>('eth_subscribe', ['newHeads']));
  const logs = client.of(await client.ask<string>('eth_subscribe', ['logs', { address: contract, topics: [TOPIC] }]));
  return { node, app, contract, heads, logs, transact };
}

async function hashesOn(node: AnvilNode, from: number, to: number): Promise<string[]> {
  const hashes: string[] = [];
  for (let n = from; n <= to; n++) {
    hashes.push((await call<{ hash: string }>(node.url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash);
  }
  return hashes;
}

describe('a reorg through the WebSocket', () => {
  for (const feed of ['polled', 'pushed'] as const) {
    for (const how of ['anvil_reorg', 'evm_revert'] as const) {
      const what =
        how === 'anvil_reorg'
          ? 'anvil_reorg replaces the last three blocks'
          : 'evm_revert to before them and one new block (a shorter branch)';
      it(`${what} (heads ${feed}): the new heads from the fork point on, removed: true logs with the old block hash`, async () => {
        const { node, heads, logs, transact, contract } = await reorgSetup(feed);
        const snapshot = await call<string>(node.url, 'evm_snapshot');
        const receipts = [
          await transact(contract, '0x'),
          await transact(contract, '0x'),
          await transact(contract, '0x'),
        ];
        await waitFor(() => logs.length === 3 && heads.length === 3, 'three logs and heads');
        const oldHashes = receipts.map((r) => r.blockHash);
        assert.deepEqual(
          heads.map((h) => h.hash),
          oldHashes,
        );
        assert.deepEqual(
          logs.map((log) => [log.blockHash, log.transactionHash, log.removed]),
          receipts.map((r) => [r.blockHash, r.transactionHash, false]),
        );

        const tip = Number(receipts[2]?.blockNumber);
        const forkPoint = tip - 2;
        // anvil_reorg: three other (empty) blocks at the same heights; evm_revert: back to before the
        // three calls, then one empty block, so the new branch is two blocks shorter.
        if (how === 'anvil_reorg') await call(node.url, 'anvil_reorg', [3, []]);
        else {
          assert.equal(await call(node.url, 'evm_revert', [snapshot]), true);
          await call(node.url, 'evm_mine');
        }
        const newTip = how === 'anvil_reorg' ? tip : forkPoint;
        const newBranch = await hashesOn(node, forkPoint, newTip);
        assert.ok(
          newBranch.every((hash, i) => hash !== oldHashes[i]),
          'the blocks were replaced',
        );
        await waitFor(
          () => heads.length === 3 + newBranch.length,
          `the new branch's heads (${heads.length - 3} of ${newBranch.length} so far)`,
        );
        assert.deepEqual(
          heads.slice(3).map((h) => [Number(h.number), h.hash]),
          newBranch.map((hash, i) => [forkPoint + i, hash]),
          'the new heads from the fork point on',
        );
        await waitFor(() => logs.length === 6, 'three removed logs');
        assert.deepEqual(
          logs.slice(3).map((log) => [log.blockNumber, log.blockHash, log.transactionHash, log.logIndex, log.removed]),
          logs.slice(0, 3).map((log) => [log.blockNumber, log.blockHash, log.transactionHash, log.logIndex, true]),
          'each log of the blocks that left, again, with removed: true and the old block hash',
        );

        // The chain goes on from the new branch: one more log, once, on the next block.
        const next = await transact(contract, '0x');
        assert.equal(Number(next.blockNumber), newTip + 1);
        await waitFor(() => logs.length === 7, 'a log on the new branch');
        assert.deepEqual([logs[6]?.blockHash, logs[6]?.removed], [next.blockHash, false]);
        await waitFor(() => heads.length === 4 + newBranch.length, 'the next head');
        assert.equal(heads.at(-1)?.hash, next.blockHash);
      });
    }
  }
});

describe('a burst of blocks between two head polls', () => {
  it('is back-filled by number: every head once, in order, and the log in the burst once', async () => {
    const { node, heads, logs, contract, transact } = await reorgSetup('polled');
    const tip = Number(await call<string>(node.url, 'eth_blockNumber'));
    const from = (await call<string[]>(node.url, 'eth_accounts'))[0] as string;
    await call(node.url, 'evm_setAutomine', [false]);
    const tx = await call<string>(node.url, 'eth_sendTransaction', [
      { from, to: contract, data: '0x', gas: '0x30000' },
    ]);
    await call(node.url, 'anvil_mine', ['0x32']); // 50 blocks at once; the call is in the first
    await call(node.url, 'evm_setAutomine', [true]);
    const last = await transact(contract, '0x'); // one more log after the burst
    const end = Number(last.blockNumber);
    assert.equal(end, tip + 51);
    await waitFor(
      () => Number(heads.at(-1)?.number) === end && logs.at(-1)?.transactionHash === last.transactionHash,
      'the last head and log',
    );
    assert.deepEqual(
      heads.map((head) => Number(head.number)),
      Array.from({ length: 51 }, (_, i) => tip + 1 + i),
    );
    assert.deepEqual(
      heads.map((head) => head.hash),
      await hashesOn(node, tip + 1, end),
    );
    assert.deepEqual(
      logs.map((log) => [Number(log.blockNumber), log.transactionHash, log.removed]),
      [
        [tip + 1, tx, false],
        [end, last.transactionHash, false],
      ],
    );
  });
});

function wsUrl(app: TestApp): string {
  return app.rpcUrl().replace(/^http/, 'ws');
}
