import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { startHttpServer, type TestServer } from '../../../../test/helpers/http.js';
import { MetricsRegistry } from '../../../metrics/registry.js';
import { FinalityTracker } from './finality.js';
import { type OriginAnswer, ResponseCache } from './response-cache.js';

/**
 * The cache against a real node:http origin on port 0: every upstream call is counted by the server
 * itself, so "served from cache" and "coalesced" mean the origin really saw fewer requests.
 */

const HASH = `0x${'ab'.repeat(32)}`;
const BLOCK_HASH = `0x${'cd'.repeat(32)}`;

interface Origin {
  server: TestServer;
  calls(method: string): number;
  /** Answers are held until `release()` when set. */
  hold(): void;
  release(): void;
  answer: (method: string, params: unknown[]) => { status?: number; body: unknown };
}

async function startOrigin(): Promise<Origin> {
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  const origin: Origin = {
    server: undefined as unknown as TestServer,
    calls: (method) => origin.server.received.filter((r) => JSON.parse(r.body).method === method).length,
    hold() {
      gate = new Promise((resolve) => {
        open = resolve;
      });
    },
    release() {
      open?.();
      gate = undefined;
    },
    answer: (method) => ({ body: { result: method === 'eth_chainId' ? '0xaa36a7' : null } }),
  };
  origin.server = await startHttpServer(async (_req, res, body) => {
    if (gate !== undefined) await gate;
    const request = JSON.parse(body) as { id: unknown; method: string; params: unknown[] };
    const { status, body: payload } = origin.answer(request.method, request.params ?? []);
    res.writeHead(status ?? 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: request.id, ...(payload as object) }));
  });
  return origin;
}

function forwarder(origin: Origin, method: string, params: unknown[], id = 1): () => Promise<OriginAnswer> {
  return async () => {
    const res = await fetch(origin.server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
  };
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * A finality tracker fed as the chain tracker feeds it (`observe`); its own lookups (by height during a
 * conflict search) go to `state`.
 */
function tracker(finalized: { number: bigint; hash: string } | undefined) {
  const state = { finalized, blocks: new Map<bigint, string>() };
  const finality = new FinalityTracker({
    source: async (_network, which) => {
      if (which === 'finalized') return state.finalized;
      const hash = state.blocks.get(which);
      return hash === undefined ? undefined : { number: which, hash };
    },
  });
  return { finality, state };
}

const origins: Origin[] = [];
after(async () => {
  for (const origin of origins) await origin.server.close();
});

async function origin(): Promise<Origin> {
  const o = await startOrigin();
  origins.push(o);
  return o;
}

test('N identical concurrent reads make one upstream call, and later ones are hits', async () => {
  const upstream = await origin();
  const cache = new ResponseCache({ maxBytes: 1_048_576 });
  const plan = cache.plan('sepolia', 'eth_chainId', [])!;
  upstream.hold();
  const reads = Array.from({ length: 20 }, (_, i) => cache.read(plan, forwarder(upstream, 'eth_chainId', [], i + 1)));
  await waitFor(() => upstream.server.received.length >= 1, 'the first upstream call');
  upstream.release();
  const results = await Promise.all(reads);
  assert.equal(upstream.calls('eth_chainId'), 1);
  assert.deepEqual(results.map((r) => r.outcome).sort(), ['miss', ...Array(19).fill('coalesced')].sort());
  // Everyone got the origin's bytes (the gateway splices each client's id afterwards).
  for (const r of results) assert.equal(r.answer.body.toString(), '{"jsonrpc":"2.0","id":1,"result":"0xaa36a7"}');

  const again = await cache.read(plan, forwarder(upstream, 'eth_chainId', []));
  assert.equal(again.outcome, 'hit');
  assert.equal(upstream.calls('eth_chainId'), 1);
  assert.deepEqual(
    { hits: cache.stats().hits, misses: cache.stats().misses, coalesced: cache.stats().coalesced },
    { hits: 1, misses: 1, coalesced: 19 },
  );
});

test('errors, error answers and null results are shared with waiters but never stored', async () => {
  const upstream = await origin();
  const cache = new ResponseCache({ maxBytes: 1_048_576 });
  const cases: Array<[string, { status?: number; body: unknown }]> = [
    ['JSON-RPC error', { body: { error: { code: -32000, message: 'header not found' } } }],
    ['HTTP 503', { status: 503, body: { result: '0x1' } }],
    ['null result', { body: { result: null } }],
  ];
  for (const [name, reply] of cases) {
    upstream.answer = () => reply;
    const plan = cache.plan(`net-${name.replaceAll(' ', '-')}`, 'eth_getBlockByHash', [HASH, false])!;
    upstream.hold();
    const reads = [1, 2, 3].map((id) => cache.read(plan, forwarder(upstream, 'eth_getBlockByHash', [HASH, false], id)));
    await waitFor(() => upstream.calls('eth_getBlockByHash') >= 1, 'the upstream call');
    upstream.release();
    const results = await Promise.all(reads);
    assert.ok(
      results.every((r) => r.answer.body.equals(results[0]!.answer.body)),
      name,
    );
    const before = upstream.calls('eth_getBlockByHash');
    assert.equal(
      (await cache.read(plan, forwarder(upstream, 'eth_getBlockByHash', [HASH, false]))).outcome,
      'miss',
      name,
    );
    assert.equal(upstream.calls('eth_getBlockByHash'), before + 1, `${name} went upstream again`);
    upstream.server.received.length = 0;
  }
  assert.equal(cache.stats().entries, 0);
});

test('a forward that throws rejects every waiter and leaves nothing behind', async () => {
  const cache = new ResponseCache({ maxBytes: 1_048_576 });
  const plan = cache.plan('sepolia', 'net_version', [])!;
  let calls = 0;
  let fail: ((err: Error) => void) | undefined;
  const forward = () => {
    calls += 1;
    return new Promise<OriginAnswer>((_resolve, reject) => {
      fail = reject;
    });
  };
  const reads = [cache.read(plan, forward), cache.read(plan, forward)];
  fail!(new Error('all origins failed'));
  for (const read of reads) await assert.rejects(read, /all origins failed/);
  assert.equal(calls, 1);
  // The next read tries again.
  const ok = await cache.read(plan, async () => ({
    status: 200,
    body: Buffer.from('{"jsonrpc":"2.0","id":1,"result":"1"}'),
  }));
  assert.equal(ok.outcome, 'miss');
  assert.equal(cache.stats().entries, 1);
});

test('latest/pending and other moving reads are never planned, so never cached', () => {
  const { finality } = tracker({ number: 100n, hash: BLOCK_HASH });
  const cache = new ResponseCache({ maxBytes: 1_048_576, finality });
  for (const [method, params] of [
    ['eth_getBlockByNumber', ['latest', false]],
    ['eth_getBlockByNumber', ['pending', true]],
    ['eth_blockNumber', []],
    ['eth_getBalance', ['0x0000000000000000000000000000000000000000', 'latest']],
    ['eth_call', [{ to: '0x0000000000000000000000000000000000000000' }, 'latest']],
  ] as const) {
    assert.equal(cache.plan('sepolia', method, params), undefined, method);
  }
});

test('blocks by number are cached at or below finality, and a reorg there drops them from its height up', async () => {
  const upstream = await origin();
  const hashOf = (n: bigint, fork = '') => `0x${(fork + n.toString(16)).padStart(64, '0')}`;
  const { finality, state } = tracker(undefined);
  for (let n = 0n; n <= 100n; n++) state.blocks.set(n, hashOf(n));
  // Finality advances over time; the tracker remembers each finalized block it saw.
  for (const n of [10n, 50n, 90n, 100n]) {
    state.finalized = { number: n, hash: hashOf(n) };
    await finality.observe('sepolia', state.finalized);
  }
  // The chain tracker's window holds the chain as it is now.
  const canonical = (_network: string, height: number) => state.blocks.get(BigInt(height));
  const cache = new ResponseCache({ maxBytes: 1_048_576, finality, canonical });
  upstream.answer = (method, params) => {
    if (method !== 'eth_getBlockByNumber') return { body: { result: null } };
    const n = BigInt(params[0] as string);
    return { body: { result: { number: `0x${n.toString(16)}`, hash: state.blocks.get(n), transactions: [] } } };
  };
  const read = (n: bigint) =>
    cache.read(
      cache.plan('sepolia', 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])!,
      forwarder(upstream, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false]),
    );
  for (const n of [10n, 50n, 90n, 100n]) assert.equal((await read(n)).outcome, 'miss');
  for (const n of [10n, 50n, 90n, 100n]) assert.equal((await read(n)).outcome, 'hit');
  assert.equal(cache.plan('sepolia', 'eth_getBlockByNumber', ['0x65', false]), undefined, 'above finality');

  // The chain changes from height 60 on, so finalized block 100 comes back with another hash. The
  // tracker binary-searches its remembered blocks: 50 still matches, 90 does not → drop from 51 up.
  for (let n = 60n; n <= 100n; n++) state.blocks.set(n, hashOf(n, 'f'));
  state.finalized = { number: 100n, hash: hashOf(100n, 'f') };
  await finality.observe('sepolia', state.finalized);
  const outcomes = [];
  for (const n of [10n, 50n, 90n, 100n]) outcomes.push((await read(n)).outcome);
  assert.deepEqual(outcomes, ['hit', 'hit', 'miss', 'miss']);
  assert.equal(cache.stats().invalidations, 2);
  // The new chain's blocks are what is cached now.
  const again = await read(90n);
  assert.equal(again.outcome, 'hit');
  assert.match(again.answer.body.toString(), new RegExp(hashOf(90n, 'f')));
});

test('a cached block that disagrees with a finalized block at its height triggers invalidation', async () => {
  const { finality, state } = tracker({ number: 100n, hash: `0x${'11'.repeat(32)}` });
  await finality.observe('sepolia', { number: 100n, hash: `0x${'11'.repeat(32)}` });
  // The tracker's window says 0xcd… (it moved to another branch since finality was last fetched).
  const cache = new ResponseCache({ maxBytes: 1_048_576, finality, canonical: () => BLOCK_HASH });
  const plan = cache.plan('sepolia', 'eth_getBlockByNumber', ['0x64', false])!;
  const body = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"number":"0x64","hash":"${BLOCK_HASH}"}}`);
  await cache.read(plan, async () => ({ status: 200, body }));
  assert.equal(cache.stats().entries, 1);
  // The tracker has seen 0x11… for block 100 while the cached block says 0xcd…: the next observation of
  // block 100 as final must drop the entry (whichever of the two was wrong).
  state.finalized = { number: 100n, hash: `0x${'11'.repeat(32)}` };
  await finality.observe('sepolia', state.finalized);
  await waitFor(() => cache.stats().entries === 0, 'the conflicting entry to be dropped');
});

test('an answer in flight across a reorg is not stored', async () => {
  const { finality } = tracker({ number: 100n, hash: BLOCK_HASH });
  await finality.observe('sepolia', { number: 100n, hash: BLOCK_HASH });
  const cache = new ResponseCache({ maxBytes: 1_048_576, finality });
  const plan = cache.plan('sepolia', 'eth_getBlockByNumber', ['0x50', false])!;
  let finish: ((a: OriginAnswer) => void) | undefined;
  const read = cache.read(
    plan,
    () =>
      new Promise((resolve) => {
        finish = resolve;
      }),
  );
  cache.invalidateFrom('sepolia', 0x40n);
  finish!({
    status: 200,
    body: Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"number":"0x50","hash":"${BLOCK_HASH}"}}`),
  });
  await read;
  assert.equal(cache.stats().entries, 0);
});

test('the cache stays within its byte budget, evicting the least recently used answers', async () => {
  const cache = new ResponseCache({ maxBytes: 64 * 1024 });
  const body = (i: number) =>
    Buffer.from(
      `{"jsonrpc":"2.0","id":1,"result":{"number":"0x${i.toString(16)}","hash":"0x${i.toString(16).padStart(64, '0')}","pad":"${'0'.repeat(4000)}"}}`,
    );
  for (let i = 1; i <= 40; i++) {
    const hash = `0x${i.toString(16).padStart(64, '0')}`;
    await cache.read(cache.plan('sepolia', 'eth_getBlockByHash', [hash, false])!, async () => ({
      status: 200,
      body: body(i),
    }));
    assert.ok(cache.stats().bytes <= 64 * 1024, `within budget after ${i}`);
  }
  const stats = cache.stats();
  assert.ok(stats.evictions > 0);
  assert.equal(stats.entries + stats.evictions, 40);
  // The newest is still there, the oldest is not.
  const newest = cache.plan('sepolia', 'eth_getBlockByHash', [`0x${(40).toString(16).padStart(64, '0')}`, false])!;
  const oldest = cache.plan('sepolia', 'eth_getBlockByHash', [`0x${(1).toString(16).padStart(64, '0')}`, false])!;
  assert.notEqual(cache.lookup(newest), undefined);
  assert.equal(cache.lookup(oldest), undefined);
});

test('hit, miss and coalesced counters are exported as Prometheus metrics', async () => {
  const metrics = new MetricsRegistry();
  const cache = new ResponseCache({ maxBytes: 1_048_576, metrics });
  const plan = cache.plan('sepolia', 'eth_chainId', [])!;
  const forward = async () => ({ status: 200, body: Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x1"}') });
  await Promise.all([cache.read(plan, forward), cache.read(plan, forward)]);
  await cache.read(plan, forward);
  const text = metrics.render();
  assert.match(text, /switchyard_gateway_cache_misses_total\{network="sepolia"\} 1\n/);
  assert.match(text, /switchyard_gateway_cache_coalesced_total\{network="sepolia"\} 1\n/);
  assert.match(text, /switchyard_gateway_cache_hits_total\{network="sepolia"\} 1\n/);
  assert.match(text, /switchyard_gateway_cache_entries 1\n/);
});

test('cache_max_bytes 0 disables caching and coalescing', () => {
  const cache = new ResponseCache({ maxBytes: 0 });
  assert.equal(cache.plan('sepolia', 'eth_chainId', []), undefined);
});
