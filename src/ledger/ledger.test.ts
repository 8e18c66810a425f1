/**
 * The ledger over a scripted chain and scripted origins (no gateway, no node): what it records, what a
 * new head costs, the tracker's reorg and gap events, finality by depth, and dropped detection when an
 * origin does not answer. The store is a real one (SQLite here; the API and alert suites run both).
 */
import assert from 'node:assert/strict';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { openTestStore } from '../../test/helpers/store.js';
import type { TrackedOrigin } from '../chain/tracker.js';
import type { ChainListener } from '../chain/types.js';
import { ManualClock } from '../clock.js';
import { buildConfig } from '../config/load.js';
import { silentLogger } from '../log.js';
import type { OriginCall, OriginCallAnswer, OriginCalls } from '../model/origin-calls.js';
import type { Origin, Pool } from '../model/pool.js';
import type { LedgerChain } from './follower.js';
import { Ledger } from './ledger.js';
import { getRecord } from './record-queries.js';

const ALICE = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const CHAIN_ID = 11_155_111;
const blockHash = (n: number, branch = 'a') => `0x${branch.repeat(8)}${n.toString(16).padStart(56, '0')}`;

/** Two origins' answers, scripted per test; every call is counted by method. */
class ScriptedOrigins implements OriginCalls {
  readonly calls = new Map<string, number>();
  /** block hash → the hashes of its transactions (sender ALICE, nonces as given). */
  blocks = new Map<string, Array<{ hash: string; nonce: number }>>();
  /** origin name → tx hash → where it is (`null`: nowhere); an origin in `failing` throws. */
  seen = new Map<string, Map<string, { blockNumber: string; blockHash: string } | 'mempool' | null>>();
  failing = new Set<string>();

  async call(origin: Origin, calls: readonly OriginCall[]): Promise<OriginCallAnswer[]> {
    if (this.failing.has(origin.name)) throw new Error('connection refused');
    return calls.map(([method, params]) => {
      this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
      if (method === 'eth_getBlockByHash') {
        const txs = this.blocks.get(params[0] as string);
        if (txs === undefined) return { result: null };
        const transactions = txs.map((tx, i) => ({
          hash: tx.hash,
          from: ALICE.address,
          nonce: `0x${tx.nonce.toString(16)}`,
          transactionIndex: `0x${i.toString(16)}`,
        }));
        return { result: { hash: params[0], transactions } };
      }
      if (method === 'eth_getTransactionByHash') {
        const where = this.seen.get(origin.name)?.get(params[0] as string) ?? null;
        if (where === null) return { result: null };
        if (where === 'mempool') return { result: { hash: params[0], blockNumber: null, blockHash: null } };
        return { result: { hash: params[0], ...where, transactionIndex: '0x0' } };
      }
      if (method === 'eth_getTransactionCount') return { result: '0x0' };
      return { result: params[0] };
    });
  }
}

class ScriptedChain implements LedgerChain {
  readonly listeners = new Set<ChainListener>();
  head: { number: number; hash: string } | undefined;
  finalizedBlock: { number: number } | undefined;
  readonly origins: TrackedOrigin[] = ['o0', 'o1'].map((name) => ({
    pool: { id: 'pool', name: 'p' } as Pool,
    origin: { name } as Origin,
    state: { head: 0, hash: undefined, earliest: 0, syncing: false },
    usable: true,
    pushing: false,
  }));
  addListener(listener: ChainListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  trackedOrigins(): TrackedOrigin[] {
    return this.origins;
  }
  leader(): TrackedOrigin | undefined {
    return this.origins[0];
  }
  canonicalHead() {
    return this.head;
  }
  canonical() {
    return this.head === undefined ? [] : [this.head];
  }
  finalized() {
    return this.finalizedBlock;
  }
  touch(): void {}
  emitHead(number: number, branch = 'a'): void {
    this.head = { number, hash: blockHash(number, branch) };
    const block = { ...this.head, parentHash: blockHash(number - 1, branch), timestamp: number, header: {} };
    for (const listener of this.listeners) listener.head?.('sepolia', block);
  }
}

describe('ledger over a scripted chain', () => {
  let store: Awaited<ReturnType<typeof openTestStore>>;
  let chain: ScriptedChain;
  let origins: ScriptedOrigins;
  let ledger: Ledger;
  const clock = new ManualClock('2026-05-10T12:00:00Z');
  const config = buildConfig(
    {
      networks: { sepolia: { chain_id: CHAIN_ID, pools: ['p'], finality_depth: 3, ledger: { dropped_after: 60 } } },
    },
    'test',
  );

  beforeEach(async () => {
    store = await openTestStore();
    chain = new ScriptedChain();
    origins = new ScriptedOrigins();
    ledger = new Ledger({ config, store: store.store, clock, logger: silentLogger });
    await ledger.start({ chain, calls: origins });
  });
  afterEach(async () => {
    await ledger.stop();
    await store.close();
  });
  after(() => undefined);

  /** Records a send of ALICE with this nonce; returns its hash. */
  const send = async (nonce: number): Promise<string> => {
    const raw = await ALICE.signTransaction({
      type: 'eip1559',
      chainId: CHAIN_ID,
      nonce,
      to: ALICE.address,
      value: 1n,
      gas: 21_000n,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
    });
    ledger.sends.accepted({
      network: 'sepolia',
      raw,
      keyId: undefined,
      client: '127.0.0.1',
      origins: ['p/o0'],
      at: clock.now(),
    });
    await ledger.settled();
    const rows = await store.store.db.selectFrom('ledger_transactions').select(['hash', 'nonce']).execute();
    return (rows.find((row) => Number(row.nonce) === nonce) as { hash: string }).hash;
  };
  const status = async (hash: string) => (await getRecord(store.store.db, config.account_id, hash))?.status;
  const history = async (hash: string) =>
    (await getRecord(store.store.db, config.account_id, hash))?.history.map((entry) => entry.status);

  it('records the sender and nonce recovered from the signature, once per transaction', async () => {
    const hash = await send(4);
    await send(4);
    const record = await getRecord(store.store.db, config.account_id, hash);
    assert.equal(record?.from, ALICE.address.toLowerCase());
    assert.equal(record?.nonce, 4);
    assert.equal((await store.store.db.selectFrom('ledger_transactions').selectAll().execute()).length, 1);
    ledger.sends.accepted({ network: 'sepolia', raw: '0xdeadbeef', keyId: undefined, client: 'c', origins: [], at: 0 });
    ledger.sends.accepted({ network: 'elsewhere', raw: '0x00', keyId: undefined, client: 'c', origins: [], at: 0 });
    await ledger.settled();
    assert.equal((await store.store.db.selectFrom('ledger_transactions').selectAll().execute()).length, 1);
  });

  it('a new head costs one block fetch, whatever is pending, and no lookup per record', async () => {
    const hashes = [];
    for (let nonce = 0; nonce < 5; nonce += 1) hashes.push(await send(nonce));
    origins.calls.clear();
    for (let n = 1; n <= 4; n += 1) origins.blocks.set(blockHash(n), []);
    for (let n = 1; n <= 4; n += 1) chain.emitHead(n);
    await ledger.settled();
    assert.deepEqual(Object.fromEntries(origins.calls), { eth_getBlockByHash: 4 });
    origins.blocks.set(blockHash(5), [{ hash: hashes[2] as string, nonce: 2 }]);
    chain.emitHead(5);
    await ledger.settled();
    assert.equal(await status(hashes[2] as string), 'included');
    assert.equal(await status(hashes[1] as string), 'pending');
  });

  it('the tracker’s reorg takes included records back to pending; finality by depth without a finalized block', async () => {
    const hash = await send(0);
    origins.blocks.set(blockHash(5), [{ hash, nonce: 0 }]);
    chain.emitHead(5);
    await ledger.settled();
    assert.equal(await status(hash), 'included');
    for (const listener of chain.listeners)
      listener.reorg?.('sepolia', { forkPoint: 5, removed: [], beyondWindow: false });
    await ledger.settled();
    assert.equal(await status(hash), 'pending');
    assert.deepEqual(await history(hash), ['pending', 'included', 'reorged']);
    origins.blocks.set(blockHash(5, 'b'), [{ hash, nonce: 0 }]);
    chain.emitHead(5, 'b');
    for (let n = 6; n <= 7; n += 1) chain.emitHead(n, 'b');
    await ledger.settled();
    assert.equal(await status(hash), 'included', 'head 7 − depth 3 = 4 < 5: not final yet');
    chain.emitHead(8, 'b');
    await ledger.settled();
    assert.equal(await status(hash), 'final');
    assert.deepEqual(await history(hash), ['pending', 'included', 'reorged', 'included', 'final']);
  });

  it('after a gap in heads, pending records are looked up by hash and included where an origin has them', async () => {
    const hash = await send(0);
    chain.emitHead(20);
    await ledger.settled();
    origins.seen.set('o0', new Map([[hash, { blockNumber: '0x14', blockHash: blockHash(20) }]]));
    origins.calls.clear();
    for (const listener of chain.listeners) listener.gap?.('sepolia', 10, 19);
    ledger.sweep();
    await ledger.settled();
    assert.equal(origins.calls.get('eth_getTransactionByHash'), 1);
    assert.equal(await status(hash), 'included');
  });

  it('dropped only when every usable origin answered null for dropped_after; a silent origin decides nothing', async () => {
    const hash = await send(0);
    const check = async (ms: number) => {
      clock.advance(ms);
      ledger.sweep();
      await ledger.settled();
    };
    origins.failing.add('o1');
    await check(16_000);
    await check(61_000);
    await check(16_000);
    assert.equal(await status(hash), 'pending', 'o1 never answered: nothing is known');
    origins.failing.clear();
    origins.seen.set('o1', new Map([[hash, 'mempool']]));
    await check(16_000);
    await check(61_000);
    assert.equal(await status(hash), 'pending', 'o1 holds it');
    origins.seen.clear();
    await check(16_000);
    assert.equal(await status(hash), 'pending', 'absent since just now');
    await check(61_000);
    assert.equal(await status(hash), 'dropped');
  });
});
