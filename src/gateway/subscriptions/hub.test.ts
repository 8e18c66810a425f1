import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TrackedOrigin } from '../../chain/tracker.js';
import type { BlockHead, ChainListener, ChainReorg } from '../../chain/types.js';
import { ManualClock } from '../../clock.js';
import type { NetworkConfig } from '../../config/schema.js';
import { silentLogger } from '../../log.js';
import type { Origin, Pool } from '../../model/pool.js';
import type { Forwarder, UpstreamRequest } from '../rpc/forwarder.js';
import { SubscriptionHub, type SubscriptionHubDeps, type SubscriptionSink } from './hub.js';
import { MAX_QUEUED_BLOCKS } from './logs.js';

const NETWORKS = { sepolia: { pools: ['sepolia-pool'] } as unknown as NetworkConfig };
const CONTRACT = `0x${'c0'.repeat(20)}`;
const OTHER = `0x${'0d'.repeat(20)}`;
const TOPIC = `0x${'e1'.repeat(32)}`;

class FakeTracker {
  readonly listeners = new Set<ChainListener>();
  tracked: TrackedOrigin[] = [];
  /** The network head the tracker knows. */
  known: number | undefined;
  networkHead(): number | undefined {
    return this.known;
  }
  trackedOrigins(): TrackedOrigin[] {
    return this.tracked;
  }
  addListener(listener: ChainListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  head(block: BlockHead): void {
    for (const l of this.listeners) l.head?.('sepolia', block);
  }
  reorg(reorg: ChainReorg): void {
    for (const l of this.listeners) l.reorg?.('sepolia', reorg);
  }
}

/** Block n of branch b: hashes differ per branch. */
function block(n: number, branch = 'a', parentBranch = branch): BlockHead {
  const hash = (k: number, b: string) => `0x${b.repeat(2)}${k.toString(16).padStart(62, '0')}`;
  const header = {
    number: `0x${n.toString(16)}`,
    hash: hash(n, branch),
    parentHash: hash(n - 1, parentBranch),
    timestamp: `0x${(1000 + n).toString(16)}`,
    transactions: [],
    uncles: [],
    size: '0x200',
    totalDifficulty: '0x0',
    miner: CONTRACT,
    withdrawals: [],
  };
  return { number: n, hash: header.hash, parentHash: header.parentHash, timestamp: 1000 + n, header };
}

function logOf(b: BlockHead, index: number, address = CONTRACT): Record<string, unknown> {
  return {
    address,
    topics: [TOPIC],
    data: '0x',
    blockNumber: `0x${b.number.toString(16)}`,
    blockHash: b.hash,
    transactionHash: `0x${'77'.repeat(31)}${index.toString(16).padStart(2, '0')}`,
    transactionIndex: '0x0',
    logIndex: `0x${index.toString(16)}`,
    removed: false,
  };
}

/**
 * Answers eth_getLogs from `logs` (by block hash), recording every call but eth_blockNumber (answered
 * `head`, counted in `heads`; `headGate` can hold it back); `gate` can hold eth_getLogs answers back.
 */
class FakeForwarder implements Forwarder {
  readonly calls: Array<{ method: string; params: unknown }> = [];
  head: string | null = null;
  heads = 0;
  headGate: Promise<void> | undefined;
  readonly logs = new Map<string, Array<Record<string, unknown>>>();
  gate: ((hash: string) => Promise<void>) | undefined;
  failures = 0;
  other: ((method: string, params: unknown[]) => unknown) | undefined;

  async forward(request: UpstreamRequest) {
    const { method, params } = request.call as { method: string; params: unknown[] };
    assert.deepEqual(request.pools, ['sepolia-pool']);
    if (method === 'eth_blockNumber') {
      this.heads += 1;
      await this.headGate;
      const answer = { jsonrpc: '2.0', id: 1, result: this.head };
      return { body: Buffer.from(JSON.stringify(answer)), id: undefined, pool: 'sepolia-pool', origin: 'o1' };
    }
    this.calls.push({ method, params });
    let answer: unknown;
    if (method === 'eth_getLogs') {
      const filter = params[0] as { blockHash: string; address?: string[] };
      await this.gate?.(filter.blockHash);
      if (this.failures > 0) {
        this.failures -= 1;
        answer = { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'unknown block' } };
      } else {
        const all = this.logs.get(filter.blockHash) ?? [];
        const result = all.filter(
          (log) => filter.address === undefined || filter.address.includes(log.address as string),
        );
        answer = { jsonrpc: '2.0', id: 1, result };
      }
    } else {
      answer = { jsonrpc: '2.0', id: 1, result: this.other?.(method, params) ?? null };
    }
    return { body: Buffer.from(JSON.stringify(answer)), id: undefined, pool: 'sepolia-pool', origin: 'o1' };
  }
}

class Collector implements SubscriptionSink {
  readonly messages: Array<{ subscription: string; result: Record<string, unknown> | string }> = [];
  readonly texts: string[] = [];
  send(notification: string): void {
    this.texts.push(notification);
    const parsed = JSON.parse(notification) as {
      jsonrpc: string;
      method: string;
      params: { subscription: string; result: Record<string, unknown> };
    };
    assert.equal(parsed.jsonrpc, '2.0');
    assert.equal(parsed.method, 'eth_subscription');
    this.messages.push(parsed.params);
  }
  results(): Array<Record<string, unknown>> {
    return this.messages.map((m) => m.result as Record<string, unknown>);
  }
}

/** The id of a subscription answered at once (newHeads, newPendingTransactions). */
function atOnce(id: string | Promise<string>): string {
  assert.equal(typeof id, 'string');
  return id as string;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 3_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function setup(
  tuning = { retryMs: 5, maxRetryMs: 20, pendingPollMs: 10 },
  filterLimits?: SubscriptionHubDeps['filterLimits'],
) {
  const tracker = new FakeTracker();
  const forwarder = new FakeForwarder();
  const hub = new SubscriptionHub({
    chain: tracker,
    forwarder,
    networks: NETWORKS,
    clock: new ManualClock(0),
    logger: silentLogger,
    tuning,
    ...(filterLimits === undefined ? {} : { filterLimits }),
  });
  return { tracker, forwarder, hub };
}

test('newHeads: gateway ids, no head at subscribe time, heads in order in geth shape to every sink', () => {
  const { tracker, hub } = setup();
  const one = new Collector();
  const two = new Collector();
  const id1 = atOnce(hub.subscribe('sepolia', ['newHeads'], one));
  const id2 = atOnce(hub.subscribe('sepolia', ['newHeads'], two));
  assert.match(id1, /^0x[0-9a-f]{32}$/);
  assert.notEqual(id1, id2);
  assert.equal(hub.sourceCount, 1, 'one source shared by both');
  assert.equal(one.messages.length, 0, 'nothing at subscribe time');
  tracker.head(block(1));
  tracker.head(block(2));
  assert.deepEqual(
    one.results().map((h) => h.number),
    ['0x1', '0x2'],
  );
  assert.deepEqual(Object.keys(one.results()[0] ?? {}), ['number', 'hash', 'parentHash', 'timestamp', 'miner']);
  assert.ok(one.messages.every((m) => m.subscription === id1));
  assert.ok(two.messages.every((m) => m.subscription === id2));
  assert.equal(
    one.texts[0],
    `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id1}","result":{"number":"0x1","hash":"${block(1).hash}","parentHash":"${block(1).parentHash}","timestamp":"0x3e9","miner":"${CONTRACT}"}}}`,
  );
  hub.close();
});

test('newHeads after a reorg: the new canonical heads from the fork point on, as the tracker gives them', () => {
  const { tracker, hub } = setup();
  const sink = new Collector();
  hub.subscribe('sepolia', ['newHeads'], sink);
  for (const n of [1, 2, 3]) tracker.head(block(n));
  tracker.reorg({ forkPoint: 2, removed: [block(2), block(3)], beyondWindow: false });
  tracker.head(block(2, 'b', 'a'));
  tracker.head(block(3, 'b'));
  tracker.head(block(4, 'b'));
  assert.deepEqual(
    sink.results().map((h) => [h.number, h.hash]),
    [
      ['0x1', block(1).hash],
      ['0x2', block(2).hash],
      ['0x3', block(3).hash],
      ['0x2', block(2, 'b').hash],
      ['0x3', block(3, 'b').hash],
      ['0x4', block(4, 'b').hash],
    ],
  );
  hub.close();
});

test('unsubscribe: true once, then false; unknown ids false; the last sink stops the source', () => {
  const { tracker, hub } = setup();
  const one = new Collector();
  const two = new Collector();
  const id1 = atOnce(hub.subscribe('sepolia', ['newHeads'], one));
  const id2 = atOnce(hub.subscribe('sepolia', ['newHeads'], two));
  assert.equal(hub.unsubscribe(id1.toUpperCase().replace('0X', '0x')), true);
  assert.equal(hub.unsubscribe(id1), false);
  assert.equal(hub.unsubscribe('0x1234'), false);
  tracker.head(block(1));
  assert.equal(one.messages.length, 0);
  assert.equal(two.messages.length, 1);
  assert.equal(hub.sourceCount, 1);
  assert.equal(hub.unsubscribe(id2), true);
  assert.equal(hub.sourceCount, 0);
  tracker.head(block(2));
  assert.equal(two.messages.length, 1);
  hub.close();
  assert.equal(tracker.listeners.size, 0, 'close removes the chain listener');
});

test('unknown network and bad params are refused before any source starts', () => {
  const { hub } = setup();
  assert.throws(() => hub.subscribe('mainnet', ['newHeads'], new Collector()), { code: 'NETWORK_UNKNOWN' });
  assert.throws(() => hub.subscribe('sepolia', ['bogus'], new Collector()), { code: 'RPC_INVALID_PARAMS' });
  assert.equal(hub.sourceCount, 0);
  hub.close();
});

test('logs: fetched by block hash through the forwarder, delivered block by block even when answers come out of order', async () => {
  const { tracker, forwarder, hub } = setup();
  const b1 = block(1);
  const b2 = block(2);
  forwarder.logs.set(b1.hash, [logOf(b1, 0), logOf(b1, 1), logOf(b1, 2, OTHER)]);
  forwarder.logs.set(b2.hash, [logOf(b2, 0)]);
  // Block 1's answer is held until block 2 was asked (it is not: blocks are fetched one at a time).
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  forwarder.gate = (hash) => (hash === b1.hash ? held : Promise.resolve());
  const sink = new Collector();
  const id = await hub.subscribe('sepolia', ['logs', { address: CONTRACT, topics: [TOPIC] }], sink);
  tracker.head(b1);
  tracker.head(b2);
  await waitFor(() => forwarder.calls.length === 1, 'the first eth_getLogs');
  assert.deepEqual(forwarder.calls[0], {
    method: 'eth_getLogs',
    params: [{ blockHash: b1.hash, address: [CONTRACT], topics: [[TOPIC]] }],
  });
  release();
  await waitFor(() => sink.messages.length === 3, 'three logs');
  assert.deepEqual(
    sink.results().map((log) => [log.blockNumber, log.logIndex]),
    [
      ['0x1', '0x0'],
      ['0x1', '0x1'],
      ['0x2', '0x0'],
    ],
  );
  assert.ok(sink.messages.every((m) => m.subscription === id));
  hub.close();
});

test('logs: equal filters share one source and one eth_getLogs per block', async () => {
  const { tracker, forwarder, hub } = setup();
  const b1 = block(1);
  forwarder.logs.set(b1.hash, [logOf(b1, 0)]);
  const one = new Collector();
  const two = new Collector();
  hub.subscribe('sepolia', ['logs', { address: [CONTRACT], topics: [[TOPIC], null] }], one);
  hub.subscribe('sepolia', ['logs', { address: CONTRACT.toUpperCase().replace('0X', '0x'), topics: [TOPIC] }], two);
  assert.equal(hub.sourceCount, 1);
  tracker.head(b1);
  await waitFor(() => one.messages.length === 1 && two.messages.length === 1, 'both sinks');
  assert.equal(forwarder.calls.filter((c) => c.method === 'eth_getLogs').length, 1);
  hub.close();
});

test('logs: a reorg re-sends the logs of blocks that left the chain with removed: true and their old hash, then the new branch', async () => {
  const { tracker, forwarder, hub } = setup();
  const a = [block(1), block(2), block(3)];
  const b = [block(2, 'b', 'a'), block(3, 'b'), block(4, 'b')];
  for (const head of [...a, ...b]) forwarder.logs.set(head.hash, [logOf(head, 0), logOf(head, 1)]);
  const sink = new Collector();
  hub.subscribe('sepolia', ['logs'], sink);
  for (const head of a) tracker.head(head);
  await waitFor(() => sink.messages.length === 6, 'the first branch');
  tracker.reorg({ forkPoint: 2, removed: [a[1] as BlockHead, a[2] as BlockHead], beyondWindow: false });
  for (const head of b) tracker.head(head);
  await waitFor(() => sink.messages.length === 16, 'removals and the new branch');
  const seen = sink.results().map((log) => [log.blockNumber, log.blockHash, log.logIndex, log.removed]);
  assert.deepEqual(seen.slice(6), [
    ['0x2', a[1]?.hash, '0x0', true],
    ['0x2', a[1]?.hash, '0x1', true],
    ['0x3', a[2]?.hash, '0x0', true],
    ['0x3', a[2]?.hash, '0x1', true],
    ['0x2', b[0]?.hash, '0x0', false],
    ['0x2', b[0]?.hash, '0x1', false],
    ['0x3', b[1]?.hash, '0x0', false],
    ['0x3', b[1]?.hash, '0x1', false],
    ['0x4', b[2]?.hash, '0x0', false],
    ['0x4', b[2]?.hash, '0x1', false],
  ]);
  hub.close();
});

test('logs: heads of the old branch still waiting at a reorg are never fetched nor removed', async () => {
  const { tracker, forwarder, hub } = setup();
  const a1 = block(1);
  const a2 = block(2);
  const b2 = block(2, 'b', 'a');
  for (const head of [a1, a2, b2]) forwarder.logs.set(head.hash, [logOf(head, 0)]);
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  forwarder.gate = (hash) => (hash === a1.hash ? held : Promise.resolve());
  const sink = new Collector();
  hub.subscribe('sepolia', ['logs'], sink);
  tracker.head(a1);
  tracker.head(a2);
  tracker.reorg({ forkPoint: 2, removed: [a2], beyondWindow: false });
  tracker.head(b2);
  release();
  await waitFor(() => sink.messages.length === 2, 'blocks 1 and 2b');
  assert.deepEqual(
    sink.results().map((log) => [log.blockHash, log.removed]),
    [
      [a1.hash, false],
      [b2.hash, false],
    ],
  );
  const asked = forwarder.calls.map((c) => (c.params as Array<{ blockHash: string }>)[0]?.blockHash);
  assert.deepEqual(asked, [a1.hash, b2.hash]);
  hub.close();
});

test('logs: a failed fetch is retried and later blocks wait behind it', async () => {
  const { tracker, forwarder, hub } = setup();
  const b1 = block(1);
  const b2 = block(2);
  forwarder.logs.set(b1.hash, [logOf(b1, 0)]);
  forwarder.logs.set(b2.hash, [logOf(b2, 0)]);
  forwarder.failures = 2;
  const sink = new Collector();
  hub.subscribe('sepolia', ['logs'], sink);
  tracker.head(b1);
  tracker.head(b2);
  await waitFor(() => sink.messages.length === 2, 'both blocks');
  assert.deepEqual(
    sink.results().map((log) => log.blockNumber),
    ['0x1', '0x2'],
  );
  assert.equal(forwarder.calls.length, 4, 'block 1 asked three times, block 2 once');
  hub.close();
});

test('logs: after the last unsubscribe nothing more is fetched', async () => {
  const { tracker, forwarder, hub } = setup();
  const sink = new Collector();
  const id = await hub.subscribe('sepolia', ['logs'], sink);
  tracker.head(block(1));
  await waitFor(() => forwarder.calls.length === 1, 'one fetch');
  assert.equal(hub.unsubscribe(id), true);
  tracker.head(block(2));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(forwarder.calls.length, 1);
  hub.close();
});

test('newPendingTransactions: a filter polled through the forwarder, each hash one notification, uninstalled at the end', async () => {
  const { forwarder, hub } = setup();
  const hashes = [`0x${'a1'.repeat(32)}`, `0x${'a2'.repeat(32)}`];
  let polls = 0;
  forwarder.other = (method) => {
    if (method === 'eth_newPendingTransactionFilter') return '0xf1';
    if (method === 'eth_getFilterChanges') {
      polls += 1;
      return polls === 1 ? hashes : [];
    }
    return true;
  };
  const one = new Collector();
  const two = new Collector();
  const id1 = atOnce(hub.subscribe('sepolia', ['newPendingTransactions'], one));
  hub.subscribe('sepolia', ['newPendingTransactions'], two);
  await waitFor(() => one.messages.length === 2 && two.messages.length === 2, 'the hashes');
  assert.deepEqual(
    one.messages.map((m) => [m.subscription, m.result]),
    hashes.map((hash) => [id1, hash]),
  );
  assert.equal(forwarder.calls.filter((c) => c.method === 'eth_newPendingTransactionFilter').length, 1);
  assert.deepEqual(forwarder.calls.find((c) => c.method === 'eth_getFilterChanges')?.params, ['0xf1']);
  hub.close();
  await waitFor(() => forwarder.calls.some((c) => c.method === 'eth_uninstallFilter'), 'the uninstall');
  assert.deepEqual(forwarder.calls.find((c) => c.method === 'eth_uninstallFilter')?.params, ['0xf1']);
});

test('newPendingTransactions: from a usable origin with a ws_address while its push is live, polling otherwise', async () => {
  const tracker = new FakeTracker();
  const forwarder = new FakeForwarder();
  const pool = { id: 'p1', name: 'sepolia-pool' } as unknown as Pool;
  const plain = { name: 'http-only', address: 'http://127.0.0.1:1' } as unknown as Origin;
  const pushing = { name: 'ws', address: 'http://127.0.0.1:2', ws_address: 'ws://127.0.0.1:2' } as unknown as Origin;
  const state = { head: 1, hash: undefined, earliest: 0, syncing: false, refused: false };
  tracker.tracked = [
    { pool, origin: plain, state, usable: true, pushing: false },
    { pool, origin: { ...pushing, name: 'down' } as Origin, state, usable: false, pushing: false },
    { pool, origin: pushing, state, usable: true, pushing: false },
  ];
  const feeds: Array<{
    origin: string;
    params: readonly unknown[];
    listener: { result(v: unknown): void; live(up: boolean): void };
    ended: boolean;
  }> = [];
  let filters = 0;
  forwarder.other = (method) => {
    if (method === 'eth_newPendingTransactionFilter') return `0xf${++filters}`;
    if (method === 'eth_getFilterChanges') return [];
    return true;
  };
  const hub = new SubscriptionHub({
    chain: tracker,
    forwarder,
    networks: NETWORKS,
    clock: new ManualClock(0),
    logger: silentLogger,
    tuning: { pendingPollMs: 5 },
    originFeeds: {
      subscribe(_pool, origin, params, listener) {
        const feed = { origin: origin.name, params, listener, ended: false };
        feeds.push(feed);
        return () => {
          feed.ended = true;
        };
      },
    },
  });
  const sink = new Collector();
  const id = atOnce(hub.subscribe('sepolia', ['newPendingTransactions'], sink));
  assert.equal(feeds.length, 1);
  const feed = feeds[0];
  assert.ok(feed !== undefined);
  assert.equal(feed.origin, 'ws', 'the first usable origin with a ws_address');
  assert.deepEqual(feed.params, ['newPendingTransactions']);
  await waitFor(
    () => forwarder.calls.some((c) => c.method === 'eth_getFilterChanges'),
    'polling before the push is live',
  );
  feed.listener.live(true);
  await waitFor(() => forwarder.calls.some((c) => c.method === 'eth_uninstallFilter'), 'the filter uninstalled');
  const hash = `0x${'b3'.repeat(32)}`;
  feed.listener.result(hash);
  feed.listener.result('not a hash');
  assert.deepEqual(sink.messages, [{ subscription: id, result: hash }]);
  const before = forwarder.calls.length;
  feed.listener.live(false);
  await waitFor(
    () => forwarder.calls.slice(before).some((c) => c.method === 'eth_newPendingTransactionFilter'),
    'polling again once the push is lost',
  );
  assert.equal(hub.unsubscribe(id), true);
  assert.equal(feed.ended, true, 'the last unsubscribe ends the push');
  hub.close();
});

test('logs: removals reach back over the last 128 delivered blocks only', async () => {
  const { tracker, forwarder, hub } = setup();
  const chain = Array.from({ length: 130 }, (_, i) => block(i + 1));
  for (const head of chain) forwarder.logs.set(head.hash, [logOf(head, 0)]);
  const sink = new Collector();
  hub.subscribe('sepolia', ['logs'], sink);
  for (const head of chain) tracker.head(head);
  await waitFor(() => sink.messages.length === 130, '130 logs');
  tracker.reorg({ forkPoint: 1, removed: chain, beyondWindow: true });
  await waitFor(() => sink.messages.length === 258, '128 removals');
  const removed = sink.results().slice(130);
  assert.ok(removed.every((log) => log.removed === true));
  assert.deepEqual(
    removed.map((log) => Number(log.blockNumber)),
    chain.slice(2).map((head) => head.number),
  );
  hub.close();
});

test('logs: more than MAX_QUEUED_BLOCKS waiting heads skip the oldest', async () => {
  const { tracker, forwarder, hub } = setup();
  const chain = Array.from({ length: MAX_QUEUED_BLOCKS + 2 }, (_, i) => block(i + 1));
  for (const head of chain) forwarder.logs.set(head.hash, [logOf(head, 0)]);
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  forwarder.gate = (hash) => (hash === chain[0]?.hash ? held : Promise.resolve());
  const sink = new Collector();
  hub.subscribe('sepolia', ['logs'], sink);
  for (const head of chain) tracker.head(head);
  release();
  await waitFor(() => sink.messages.length === MAX_QUEUED_BLOCKS, 'the logs of the blocks kept');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    sink.results().map((log) => Number(log.blockNumber)),
    chain.slice(2).map((head) => head.number),
  );
  hub.close();
});

test('logs: a subscription starts after the head an origin answers at subscribe time, above the known head', async () => {
  const { tracker, forwarder, hub } = setup();
  const chain = Array.from({ length: 9 }, (_, i) => block(i + 1));
  for (const head of chain) forwarder.logs.set(head.hash, [logOf(head, 0)]);
  tracker.known = 5;
  forwarder.head = '0x7';
  const sink = new Collector();
  await hub.subscribe('sepolia', ['logs'], sink);
  assert.equal(forwarder.heads, 1);
  // The tracker had not polled blocks 6 and 7 yet: they were mined before the subscription.
  for (const head of chain.slice(5)) tracker.head(head);
  await waitFor(() => sink.messages.length === 2, 'the logs of blocks 8 and 9');
  assert.deepEqual(
    sink.results().map((log) => log.blockNumber),
    ['0x8', '0x9'],
  );
  const asked = forwarder.calls.map((c) => (c.params as Array<{ blockHash: string }>)[0]?.blockHash);
  assert.deepEqual(asked, [chain[7]?.hash, chain[8]?.hash], 'blocks nobody takes are not fetched');
  hub.close();
});

test('logs: what comes while the start is asked is held, then sent from the start on; a reorg below the start rewinds it', async () => {
  const { tracker, forwarder, hub } = setup();
  const a = Array.from({ length: 4 }, (_, i) => block(i + 1));
  const b = [block(3, 'b', 'a'), block(4, 'b'), block(5, 'b')];
  for (const head of [...a, ...b]) forwarder.logs.set(head.hash, [logOf(head, 0)]);
  const early = new Collector();
  await hub.subscribe('sepolia', ['logs'], early); // starts anywhere: nothing known
  let release: () => void = () => {};
  forwarder.headGate = new Promise<void>((resolve) => {
    release = resolve;
  });
  forwarder.head = '0x3';
  const late = new Collector();
  const subscribed = hub.subscribe('sepolia', ['logs'], late);
  for (const head of a) tracker.head(head);
  await waitFor(() => early.messages.length === 4, 'blocks 1–4 for the early subscription');
  assert.equal(late.messages.length, 0, 'held while the start is asked');
  release();
  await subscribed;
  assert.deepEqual(
    late.results().map((log) => log.blockNumber),
    ['0x4'],
  );
  // Blocks 3 and 4 leave the chain: both hear the removals, and both take the new branch from block 3.
  tracker.reorg({ forkPoint: 3, removed: [a[2] as BlockHead, a[3] as BlockHead], beyondWindow: false });
  for (const head of b) tracker.head(head);
  await waitFor(() => late.messages.length === 1 + 2 + 3, 'removals and the new branch');
  assert.deepEqual(
    late.results().map((log) => [log.blockNumber, log.blockHash, log.removed]),
    [
      ['0x4', a[3]?.hash, false],
      ['0x3', a[2]?.hash, true],
      ['0x4', a[3]?.hash, true],
      ['0x3', b[0]?.hash, false],
      ['0x4', b[1]?.hash, false],
      ['0x5', b[2]?.hash, false],
    ],
  );
  hub.close();
});

test('logs: an origin head far above the known head does not set the start; no answer: the known head', async () => {
  const { tracker, forwarder, hub } = setup();
  const chain = Array.from({ length: 3 }, (_, i) => block(i + 1));
  for (const head of chain) forwarder.logs.set(head.hash, [logOf(head, 0)]);
  tracker.known = 1;
  forwarder.head = '0xf4240'; // 1,000,000
  const far = new Collector();
  await hub.subscribe('sepolia', ['logs'], far);
  forwarder.head = null;
  const none = new Collector();
  await hub.subscribe('sepolia', ['logs', { topics: [TOPIC] }], none);
  for (const head of chain) tracker.head(head);
  await waitFor(() => far.messages.length === 2 && none.messages.length === 2, 'blocks 2 and 3');
  assert.deepEqual(
    far.results().map((log) => log.blockNumber),
    ['0x2', '0x3'],
  );
  hub.close();
});

test('logs: a filter over gateway.websocket.max_filter_addresses or max_filter_topics is refused before anything starts', async () => {
  const { forwarder, hub } = setup(undefined, { max_filter_addresses: 3, max_filter_topics: 2 });
  const address = (n: number) => Array.from({ length: n }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);
  const topic = (n: number) => Array.from({ length: n }, (_, i) => `0x${(i + 1).toString(16).padStart(64, '0')}`);
  const refused = (filter: unknown, limit: RegExp) =>
    assert.throws(
      () => hub.subscribe('sepolia', ['logs', filter], new Collector()),
      (err: { code: string; message: string }) => err.code === 'RPC_INVALID_PARAMS' && limit.test(err.message),
    );
  refused({ address: address(4) }, /4 addresses; at most 3 .*gateway\.websocket\.max_filter_addresses/);
  refused({ topics: [null, topic(3)] }, /position 1 lists 3 values; at most 2 .*gateway\.websocket\.max_filter_topics/);
  refused({ topics: [null, null, null, null, null] }, /5 positions; at most 4/);
  assert.equal(hub.sourceCount, 0);
  assert.equal(forwarder.heads, 0);
  // At the limits: accepted.
  await hub.subscribe('sepolia', ['logs', { address: address(3), topics: [topic(2), topic(2)] }], new Collector());
  assert.equal(hub.sourceCount, 1);
  hub.close();
});
