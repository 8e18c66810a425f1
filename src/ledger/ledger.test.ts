/**
 * The ledger over a scripted chain and scripted origins (no gateway, no node): what it records, what a
 * new head costs, the tracker's reorg and gap events, finality by depth, and dropped detection when an
 * origin does not answer. The store is a real one (SQLite here; the API and alert suites run both).
 */
import assert from 'node:assert/strict';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { blockHash, ScriptedChain, ScriptedOrigins } from '../../test/helpers/ledger-chain.js';
import { openTestStore } from '../../test/helpers/store.js';
import { ManualClock } from '../clock.js';
import { buildConfig } from '../config/load.js';
import { silentLogger } from '../log.js';
import { MetricsRegistry } from '../metrics/registry.js';
import { Ledger } from './ledger.js';
import { LedgerMetrics } from './metrics.js';
import { getRecord } from './record-queries.js';
import { LedgerRecorder, QUEUE_MAX } from './recorder.js';

const ALICE = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const CHAIN_ID = 11_155_111;
const blockHead = (n: number) => ({
  number: n,
  hash: blockHash(n),
  parentHash: blockHash(n - 1),
  timestamp: n,
  header: {},
});

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

  let metrics: MetricsRegistry;

  beforeEach(async () => {
    store = await openTestStore();
    chain = new ScriptedChain();
    origins = new ScriptedOrigins();
    metrics = new MetricsRegistry();
    ledger = new Ledger({ config, store: store.store, clock, logger: silentLogger, metrics });
    await ledger.start({ chain, calls: origins });
  });
  /** The ledger again, on the same store, with these `networks.sepolia.ledger` settings. */
  const restart = async (settings: Record<string, unknown>): Promise<void> => {
    await ledger.stop();
    const changed = buildConfig(
      { networks: { sepolia: { chain_id: CHAIN_ID, pools: ['p'], finality_depth: 3, ledger: settings } } },
      'test',
    );
    metrics = new MetricsRegistry();
    ledger = new Ledger({ config: changed, store: store.store, clock, logger: silentLogger, metrics });
    await ledger.start({ chain, calls: origins });
  };
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
    for (let n = 1; n <= 4; n += 1) origins.setBlock(blockHash(n), []);
    for (let n = 1; n <= 4; n += 1) chain.emitHead(n);
    await ledger.settled();
    assert.deepEqual(Object.fromEntries(origins.calls), { eth_getBlockByHash: 4 });
    origins.setBlock(blockHash(5), [{ hash: hashes[2] as string, from: ALICE.address, nonce: 2 }]);
    chain.emitHead(5);
    await ledger.settled();
    assert.equal(await status(hashes[2] as string), 'included');
    assert.equal(await status(hashes[1] as string), 'pending');
  });

  it('the tracker’s reorg takes included records back to pending; finality by depth without a finalized block', async () => {
    const hash = await send(0);
    origins.setBlock(blockHash(5), [{ hash, from: ALICE.address, nonce: 0 }]);
    chain.emitHead(5);
    await ledger.settled();
    assert.equal(await status(hash), 'included');
    for (const listener of chain.listeners)
      listener.reorg?.('sepolia', { forkPoint: 5, removed: [], beyondWindow: false });
    await ledger.settled();
    assert.equal(await status(hash), 'pending');
    assert.deepEqual(await history(hash), ['pending', 'included', 'reorged']);
    origins.setBlock(blockHash(5, 'b'), [{ hash, from: ALICE.address, nonce: 0 }]);
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
    chain.emitGap(10, 19);
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

  it('final at the finalized block when one is known, before finality_depth would say so', async () => {
    const hash = await send(0);
    origins.setBlock(blockHash(5), [{ hash, from: ALICE.address, nonce: 0 }]);
    chain.emitHead(5);
    await ledger.settled();
    chain.finalizedBlock = { number: 4 };
    chain.emitHead(6);
    await ledger.settled();
    assert.equal(await status(hash), 'included', 'finalized 4 < 5 (depth alone would not say final either)');
    chain.finalizedBlock = { number: 5 };
    for (const listener of chain.listeners) listener.finalized?.('sepolia', { ...blockHead(5) });
    await ledger.settled();
    assert.equal(await status(hash), 'final', 'at the finalized block, though head 6 − depth 3 < 5');
  });

  it('no rebroadcast once the sender’s nonce moved past the transaction: dropped at once', async () => {
    await restart({ dropped_after: 60, rebroadcast: true, max_rebroadcasts: 3 });
    const hash = await send(0);
    origins.nonce = 1;
    for (const ms of [16_000, 61_000]) {
      clock.advance(ms);
      ledger.sweep();
      await ledger.settled();
    }
    assert.equal(await status(hash), 'dropped');
    assert.equal(origins.calls.get('eth_sendRawTransaction'), undefined, 'never sent again');
  });

  it('max_pending: the oldest pending records leave tracking, counted, nobody owns them', async () => {
    await restart({ dropped_after: 60, max_pending: 1 });
    const older = await send(0);
    const newer = await send(1);
    const owners = await store.store.db.selectFrom('ledger_transactions').select(['hash', 'owner']).execute();
    assert.equal(owners.find((row) => row.hash === older)?.owner, '');
    assert.notEqual(owners.find((row) => row.hash === newer)?.owner, '');
    assert.match(metrics.render(), /switchyard_ledger_untracked_total\{network="sepolia"\} 1\b/);
    // Not followed: a block including it changes nothing.
    origins.setBlock(blockHash(3), [{ hash: older, from: ALICE.address, nonce: 0 }]);
    chain.emitHead(3);
    await ledger.settled();
    assert.equal(await status(older), 'pending');
  });

  it('switchyard_ledger_transactions counts the store’s records by network and status', async () => {
    await send(0);
    const included = await send(1);
    origins.setBlock(blockHash(2), [{ hash: included, from: ALICE.address, nonce: 1 }]);
    chain.emitHead(2);
    await ledger.settled();
    await ledger.countNow();
    const text = metrics.render();
    assert.match(text, /switchyard_ledger_transactions\{network="sepolia",status="pending"\} 1\b/);
    assert.match(text, /switchyard_ledger_transactions\{network="sepolia",status="included"\} 1\b/);
  });

  it('retention: raw bytes go after keep_raw, records unchanged for retention go with their history', async () => {
    await restart({ dropped_after: 60, keep_raw: '1d', retention: '2d' });
    const hash = await send(0);
    clock.advance(86_400_000 + 1_000);
    await ledger.prune();
    const row = await store.store.db.selectFrom('ledger_transactions').select('raw').executeTakeFirst();
    assert.equal(row?.raw, null);
    assert.equal(await status(hash), 'pending');
    clock.advance(86_400_000);
    await ledger.prune();
    assert.equal(await status(hash), undefined);
    assert.deepEqual(await store.store.db.selectFrom('ledger_events').select('hash').execute(), []);
  });

  it('a full queue does not record the send: counted, never waited on', async () => {
    const recorder = new LedgerRecorder({
      store: store.store,
      clock,
      logger: silentLogger,
      metrics: new LedgerMetrics(metrics),
      networks: config.networks,
      accountId: config.account_id,
      owner: 'x',
      onRecorded: () => undefined,
    });
    const send = { network: 'sepolia', raw: '0x00', keyId: undefined, client: 'c', origins: [], at: 0 };
    // Not started: nothing leaves the queue.
    for (let i = 0; i < QUEUE_MAX + 3; i += 1) recorder.accepted(send);
    assert.match(metrics.render(), /switchyard_ledger_unrecorded_total\{network="sepolia",reason="queue_full"\} 3\b/);
    await recorder.stop();
  });

  it('an inclusion an origin claimed in a block the chain did not keep goes back to pending at that height', async () => {
    const other = `0x${'e'.repeat(64)}`;
    // The origin asked right after the send says block 5 holds it, in a block the tracker has not seen yet.
    const raw = await ALICE.signTransaction({
      type: 'eip1559',
      chainId: CHAIN_ID,
      nonce: 0,
      to: ALICE.address,
      value: 1n,
      gas: 21_000n,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
    });
    const { keccak256 } = await import('viem');
    const hash = keccak256(raw);
    origins.seen.set('o0', new Map([[hash, { blockNumber: '0x5', blockHash: other }]]));
    ledger.sends.accepted({
      network: 'sepolia',
      raw,
      keyId: undefined,
      client: 'c',
      origins: ['p/o0'],
      at: clock.now(),
    });
    await ledger.settled();
    assert.equal(await status(hash), 'included');
    origins.seen.clear();
    chain.emitHead(5);
    await ledger.settled();
    assert.equal(await status(hash), 'pending');
    assert.deepEqual(await history(hash), ['pending', 'included', 'reorged']);
  });
});
