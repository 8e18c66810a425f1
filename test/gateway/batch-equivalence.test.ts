/**
 * Issue 18's correctness test of the batch path: seeded mixed batches (batch-generator.ts: valid,
 * invalid, refused, bad params, notifications, duplicate and odd ids, cached and uncached, writes)
 * answer, element by element, what the same calls answer one at a time.
 *
 * Two anvil nodes hold the same frozen chain (batch-chain.ts). Each batch goes to a gateway over node A;
 * each of its elements, alone, to a gateway over node B with the same network config (the refusal
 * messages name the network, so both call it `sepolia`). Every write is sent once to each node, so even
 * a write's answer compares exactly. Per batch:
 *   - an element whose call alone answers 204 (a notification) has no element in the batch answer;
 *     an all-notification batch answers 204 with no body (docs/gateway.md);
 *   - otherwise the batch answer is a JSON array of the answers in request order; element k has the
 *     same raw id bytes as the k-th answer alone (and as the request's own id, for a valid call), and the
 *     rest of it deep-equals that answer (same result, or same error code, message and data).
 * The second setup puts an origin in front of node A that drops answer elements from batch arrays, fails
 * whole batches and some single reads (dropping-origin.ts), with node A itself as the next pool: the
 * answers must still be the same, and the test checks the origin really dropped and failed.
 *
 * Seeds: SWITCHYARD_BATCH_SEED (a number or a comma-separated list: each runs in both setups), else
 * the defaults below; SWITCHYARD_BATCH_ROUNDS batches per seed (default 50, 1–120 elements each). A
 * failure names the seed, the batch and the element index; the same seed makes the same bytes.
 *
 * A bug this test found (seeds 1 and 3): calls the response cache coalesced shared the upstream answer
 * to the first one's bytes although their other members differed (a member JSON-RPC does not define,
 * which anvil refuses with -32600, reached the other calls), and a cache hit answered for method +
 * params whatever else the element held. Calls with members beyond the four of JSON-RPC now bypass the
 * cache (caching-forwarder.ts); the last test pins it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { type HttpResult, post, send } from '../helpers/http.js';
import { rawElements, rawMember } from '../helpers/raw-json.js';
import { type BatchChain, startBatchChain } from './batch-chain.js';
import { BatchGenerator, type GenElement } from './batch-generator.js';
import { type DroppingOrigin, startDroppingOrigin } from './dropping-origin.js';

const envSeeds = process.env.SWITCHYARD_BATCH_SEED?.split(',').map((s) => Number(s.trim()));
const PLAIN_SEEDS = envSeeds ?? [1, 2];
const DROP_SEEDS = envSeeds ?? [3, 4];
const ROUNDS = Number(process.env.SWITCHYARD_BATCH_ROUNDS ?? 50);
/** Also generate the elements that trigger the known bug below (to check a fix). */
const MAX_BATCH = 120;
/** Single calls in flight at once towards the one-at-a-time gateway. */
const PARALLEL = 8;

let chain: BatchChain;
let dropping: DroppingOrigin;
/** A plain pass-through in front of node A for the one-origin setup: counts the upstream batches. */
let counting: DroppingOrigin;
const apps: TestApp[] = [];
let batched: TestApp;
let droppingApp: TestApp;
let alone: TestApp;
/** Fresh writes both nodes have taken (their hashes may be looked up). */
const sentFresh = new Set<number>();

/** The same network on every gateway: only the pools differ. */
function gateway(pools: string[], poolConfigs: Record<string, unknown>[]): Promise<TestApp> {
  return startApp({
    networks: {
      sepolia: {
        chain_id: 11_155_111,
        pools,
        allow_methods: ['anvil_getAutomine'],
        deny_methods: ['eth_accounts', 'web3_*'],
      },
    },
    pools: poolConfigs,
    gateway: { max_batch: MAX_BATCH },
  });
}

/** Waits (bounded) until the app's chain tracker knows the frozen head, so both gateways route alike. */
async function headKnown(app: TestApp): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (app.chain.networkHead('sepolia') !== chain.head) {
    assert.ok(Date.now() < deadline, `the gateway did not learn head ${chain.head} within 15 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

before(async () => {
  chain = await startBatchChain();
  const [a, b] = chain.nodes;
  dropping = await startDroppingOrigin(a.url);
  counting = await startDroppingOrigin(a.url, { lossy: false });
  batched = await gateway(['p'], [poolOf('p', [counting.url])]);
  apps.push(batched);
  droppingApp = await gateway(['front', 'p'], [poolOf('front', [dropping.url]), poolOf('p', [a.url])]);
  apps.push(droppingApp);
  alone = await gateway(['p'], [poolOf('p', [b.url])]);
  apps.push(alone);
  await Promise.all(apps.map(headKnown));
});

after(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await dropping?.close();
  await counting?.close();
  await chain?.stop();
});

/** Runs `work` over `items` with at most `limit` in flight; results in input order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * The parsed answer without its id (ids are compared as raw text) and without the request id of a
 * gateway error (each request has its own).
 */
function withoutId(text: string): unknown {
  const parsed = JSON.parse(text) as Record<string, unknown> & { error?: { data?: unknown } };
  delete parsed.id;
  const data = parsed.error?.data;
  if (typeof data === 'object' && data !== null && 'request_id' in data) {
    delete data.request_id;
    if (Object.keys(data).length === 0) delete parsed.error?.data;
  }
  return parsed;
}

interface Tally {
  elements: number;
  notifications: number;
  results: number;
  errors: Map<number, number>;
  writes: number;
  allNotificationBatches: number;
}

/** One batch through `app` against its elements one at a time through `alone`; asserts equality. */
async function compareBatch(
  setup: string,
  seed: number,
  round: number,
  elements: readonly GenElement[],
  body: string,
  app: TestApp,
  tally: Tally,
): Promise<void> {
  const where = (index?: number) =>
    `${setup}, seed ${seed} (SWITCHYARD_BATCH_SEED=${seed}), batch ${round}` +
    (index === undefined ? '' : `, element ${index}: ${(elements[index]?.text ?? '').slice(0, 300)}`);
  const answer = await post(app.rpcUrl(), body);
  const singles: HttpResult[] = await mapLimit(elements, PARALLEL, (element) => post(alone.rpcUrl(), element.alone));
  const expected: Array<{ index: number; text: string }> = [];
  singles.forEach((single, index) => {
    assert.ok(
      single.status === 200 || single.status === 204 || single.status === 400,
      `${where(index)}: the call alone answered HTTP ${single.status} ${single.text.slice(0, 200)}`,
    );
    if (single.status === 204) {
      assert.equal(single.text, '', where(index));
      tally.notifications += 1;
    } else expected.push({ index, text: single.text });
  });
  tally.elements += elements.length;
  if (expected.length === 0) {
    tally.allNotificationBatches += 1;
    assert.equal(
      answer.status,
      204,
      `${where()}: a batch of notifications answers 204 (got ${answer.text.slice(0, 300)})`,
    );
    assert.equal(answer.text, '', `${where()}: a 204 has no body`);
    return;
  }
  assert.equal(answer.status, 200, `${where()}: HTTP status (body ${answer.text.slice(0, 300)})`);
  const parts = rawElements(answer.text);
  for (let k = 0; k < Math.max(parts.length, expected.length); k += 1) {
    const want = expected[k];
    const got = parts[k];
    assert.ok(
      want !== undefined && got !== undefined,
      `${where(want?.index)}: the batch answered ${parts.length} elements, alone ${expected.length} calls answered` +
        ` (first extra or missing at answer ${k}: ${(got ?? '').slice(0, 300)})`,
    );
    const element = elements[want.index] as GenElement;
    const gotId = rawMember(got, 'id');
    assert.equal(gotId, rawMember(want.text, 'id'), `${where(want.index)}: raw id of answer ${k}`);
    if (element.kind !== 'invalid' && element.id !== undefined) {
      assert.equal(gotId, element.id, `${where(want.index)}: the raw id is the request's own`);
    }
    assert.deepEqual(withoutId(got), withoutId(want.text), `${where(want.index)}: answer ${k}`);
    const error = (JSON.parse(got) as { error?: { code: number } }).error;
    if (error === undefined) tally.results += 1;
    else tally.errors.set(error.code, (tally.errors.get(error.code) ?? 0) + 1);
    if (element.kind === 'write') tally.writes += 1;
  }
}

async function runSeed(setup: string, seed: number, app: TestApp): Promise<Tally> {
  const generator = new BatchGenerator(seed, chain);
  const rng = generator.rng;
  const tally: Tally = {
    elements: 0,
    notifications: 0,
    results: 0,
    errors: new Map(),
    writes: 0,
    allNotificationBatches: 0,
  };
  for (let round = 0; round < ROUNDS; round += 1) {
    const size = rng.chance(0.3) ? 1 + rng.int(5) : 1 + rng.int(MAX_BATCH);
    const elements = generator.batch({
      size,
      // Batch 1 is always all notifications and batch 2 always has writes; later ones by chance.
      writes: round === 2 || rng.chance(0.25),
      allNotifications: round === 1 || rng.chance(0.04),
      // Batch 3 (and some later ones): plain reads only, which may go upstream as the client wrote them.
      plainReads: round === 3 || rng.chance(0.15),
      pendingHashes: [...sentFresh].map((i) => chain.freshHashes[i] as string),
    });
    await compareBatch(setup, seed, round, elements, generator.render(elements), app, tally);
    for (const element of elements) if (element.fresh !== undefined) sentFresh.add(element.fresh);
  }
  return tally;
}

/** The sum of a counter's series in the app's /metrics. */
async function metric(app: TestApp, name: string): Promise<number> {
  const text = (await send(app.apiUrl.replace(/\/client\/v4$/, '/metrics'), { method: 'GET' })).text;
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`))
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** Cache hits and misses of `app` while `work` runs: both must have happened. */
async function withCacheUse(app: TestApp, work: () => Promise<void>): Promise<void> {
  if (!CHECK_COVERAGE) return work();
  const hits = await metric(app, 'switchyard_gateway_cache_hits_total');
  const misses = await metric(app, 'switchyard_gateway_cache_misses_total');
  await work();
  assert.ok((await metric(app, 'switchyard_gateway_cache_hits_total')) > hits, 'some calls were cache hits');
  assert.ok((await metric(app, 'switchyard_gateway_cache_misses_total')) > misses, 'some cacheable calls missed');
}

/**
 * The run covered what it claims to: every kind of answer turned up (with enough batches to expect it:
 * a replay with few SWITCHYARD_BATCH_ROUNDS checks only equality).
 */
const CHECK_COVERAGE = ROUNDS >= 20;

function assertCoverage(tally: Tally, diagnostic: (message: string) => void): void {
  const errors = [...tally.errors].map(([code, n]) => `${code}×${n}`).join(' ');
  diagnostic(
    `${tally.elements} elements: ${tally.results} results, errors ${errors}, ${tally.notifications} notifications, ` +
      `${tally.writes} writes, ${tally.allNotificationBatches} batches of notifications only`,
  );
  if (!CHECK_COVERAGE) return;
  assert.ok(tally.allNotificationBatches > 0, 'some batches of notifications only');
  assert.ok(tally.results > 0, 'some calls answered a result');
  assert.ok(tally.notifications > 0, 'some notifications');
  assert.ok(tally.writes > 0, 'some writes');
  for (const code of [-32600, -32601, -32602]) {
    assert.ok((tally.errors.get(code) ?? 0) > 0, `some ${code} errors (seen: ${[...tally.errors.keys()].join(' ')})`);
  }
}

describe('a batch answers what its calls answer one at a time', () => {
  for (const seed of PLAIN_SEEDS) {
    test(`seed ${seed}: ${ROUNDS} mixed batches through one origin`, async (t) => {
      const batches = counting.stats.batches;
      await withCacheUse(batched, async () =>
        assertCoverage(await runSeed('one origin', seed, batched), (m) => t.diagnostic(m)),
      );
      assert.ok(!CHECK_COVERAGE || counting.stats.batches > batches, 'read-only calls went upstream as batches');
    });
  }

  for (const seed of DROP_SEEDS) {
    test(`seed ${seed}: ${ROUNDS} mixed batches through an origin that drops answers, with the next origin filling in`, async (t) => {
      dropping.reseed(seed);
      const before = { ...dropping.stats };
      await withCacheUse(droppingApp, async () =>
        assertCoverage(await runSeed('dropping origin', seed, droppingApp), (m) => t.diagnostic(m)),
      );
      if (!CHECK_COVERAGE) return;
      const stats = dropping.stats;
      assert.ok(stats.dropped > before.dropped, 'the origin dropped answer elements');
      assert.ok(stats.wholeFailures > before.wholeFailures, 'the origin failed whole batches');
      assert.ok(
        stats.singleFailures > before.singleFailures,
        'the origin failed single reads (answered by the next origin)',
      );
    });
  }
});

describe('calls with members beyond the four of JSON-RPC', () => {
  test('two calls the response cache would coalesce each get the answer to their own bytes', async () => {
    const unknownHash = `0x${'cd'.repeat(32)}`;
    const call = (id: number, extra: string) =>
      `{"jsonrpc":"2.0","id":${id},"method":"eth_getTransactionByHash","params":["${unknownHash}"]${extra}}`;
    const first = call(1, ',"x-trace":"t-1"');
    const second = call(2, '');
    const expected = [(await post(alone.rpcUrl(), first)).text, (await post(alone.rpcUrl(), second)).text];
    assert.match(expected[0] as string, /"code":-32600/, 'anvil refuses the unknown member');
    assert.match(expected[1] as string, /"result":null/, 'the plain call alone: not found');
    const answer = await post(batched.rpcUrl(), `[${first},${second}]`);
    assert.equal(answer.status, 200);
    const parts = rawElements(answer.text);
    assert.equal(parts.length, 2);
    assert.deepEqual(withoutId(parts[0] as string), withoutId(expected[0] as string), 'element 0');
    assert.deepEqual(withoutId(parts[1] as string), withoutId(expected[1] as string), 'element 1');
  });
});
