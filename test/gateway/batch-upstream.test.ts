import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { fromChainTracker, post, startHttpServer, type TestServer } from '../helpers/http.js';

/**
 * A batch's read-only calls go to one origin as one upstream batch (handler.ts, forward.ts,
 * forward-batch.ts): ids swapped for ours and the client's raw ids spliced back, answers in request
 * order, invalid elements and refused methods answered locally, notifications without elements; a
 * failed origin (5xx, garbled, not an array, no answers) means the next origin gets the batch; an
 * answer missing from the origin's array is fetched on its own; a batch with a write goes call by call.
 */

type Mode = 'ok' | 'http502' | 'garbled' | 'object' | 'drop-last' | 'empty-array' | 'missing-first';

/** A node-like origin answering batches and single calls: result = "<method>:<params JSON>". */
async function origin(mode: () => Mode): Promise<TestServer> {
  const answer = (call: { id?: unknown; method: string; params?: unknown }) => ({
    jsonrpc: '2.0',
    id: call.id,
    result: `${call.method}:${JSON.stringify(call.params ?? [])}`,
  });
  return startHttpServer((_req, res, body) => {
    const parsed = JSON.parse(body) as unknown;
    const m = mode();
    res.setHeader('content-type', 'application/json');
    if (!Array.isArray(parsed)) {
      res.end(JSON.stringify(answer(parsed as { method: string })));
      return;
    }
    if (m === 'http502') {
      res.statusCode = 502;
      res.end('bad gateway');
      return;
    }
    if (m === 'garbled') return void res.end('[{"jsonrpc":"2.0","id":1,');
    if (m === 'object')
      return void res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no batches"}}');
    if (m === 'empty-array') return void res.end('[]');
    const calls = (parsed as Array<{ id?: unknown; method: string }>).filter((c) => c.id !== undefined);
    if (m === 'missing-first') {
      // In order, the first answer a pruned node's missing-state error (chain/missing-data.ts knows it).
      const [head, ...rest] = calls.map(answer);
      const missing = {
        jsonrpc: '2.0',
        id: head?.id,
        error: { code: -32000, message: 'missing trie node 0abc (path )' },
      };
      return void res.end(JSON.stringify([missing, ...rest]));
    }
    const answers = calls.map(answer).reverse(); // origins may answer in any order
    res.end(JSON.stringify(m === 'drop-last' ? answers.slice(1) : answers));
  });
}

/** What the gateway forwarded (the chain tracker's own head polls left out). */
const forwarded = (server: TestServer) => server.received.filter((r) => !fromChainTracker(r.body));
const batches = (server: TestServer) =>
  forwarded(server)
    .filter((r) => r.body.startsWith('['))
    .map((r) => JSON.parse(r.body) as Array<{ id?: unknown; method: string }>);
const singles = (server: TestServer) => forwarded(server).filter((r) => !r.body.startsWith('['));

let first: TestServer;
let second: TestServer;
let firstMode: Mode = 'ok';
let app: TestApp;

before(async () => {
  first = await origin(() => firstMode);
  second = await origin(() => 'ok');
  app = await startApp({
    networks: { sepolia: { chain_id: 11155111, pools: ['primary', 'backup'] } },
    pools: [poolOf('primary', [first.url]), poolOf('backup', [second.url])],
  });
});

after(async () => {
  await app?.close();
  await first?.close();
  await second?.close();
});

const BODY =
  '[{"jsonrpc":"2.0","id":18446744073709551617,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]},' +
  '{"jsonrpc":"2.0","id":"s-1","method":"eth_blockNumber"},' +
  '{"jsonrpc":"2.0","method":"eth_blockNumber","params":[]},' +
  '{"jsonrpc":"1.0","id":7,"method":"eth_blockNumber"},' +
  '{"jsonrpc":"2.0","id":8,"method":"admin_peers","params":[]},' +
  '{"jsonrpc":"2.0","id":null,"method":"eth_gasPrice","params":[]}]';

function expectAnswers(text: string): void {
  // Raw ids compared as bytes; the big id would not survive a JS number.
  assert.match(text, /^\[\{"jsonrpc":"2.0","id":18446744073709551617,"result":"eth_getBalance:/);
  const answers = JSON.parse(text) as Array<{ id: unknown; result?: string; error?: { code: number } }>;
  assert.equal(answers.length, 5, 'the notification has no element');
  assert.equal(answers[1]?.id, 's-1');
  assert.equal(answers[1]?.result, 'eth_blockNumber:[]');
  assert.equal(answers[2]?.id, 7);
  assert.equal(answers[2]?.error?.code, -32600);
  assert.equal(answers[3]?.id, 8);
  assert.equal(answers[3]?.error?.code, -32601);
  assert.equal(answers[4]?.id, null);
  assert.equal(answers[4]?.result, 'eth_gasPrice:[]');
}

test('the valid, allowed calls of a batch reach the origin as one upstream batch; answers come back in order with the raw ids', async () => {
  firstMode = 'ok';
  const before = forwarded(first).length;
  const answer = await post(app.rpcUrl(), BODY);
  assert.equal(answer.status, 200);
  expectAnswers(answer.text);
  const sent = forwarded(first).slice(before);
  assert.equal(sent.length, 1, 'one upstream request');
  const batch = JSON.parse(sent[0]?.body ?? '') as Array<{ id?: unknown; method: string }>;
  assert.deepEqual(
    batch.map((c) => c.method),
    ['eth_getBalance', 'eth_blockNumber', 'eth_blockNumber', 'eth_gasPrice'],
    'invalid and refused elements never reach the origin; the notification does',
  );
  assert.equal(batch[2]?.id, undefined, 'the notification stays a notification');
  const ids = batch.filter((c) => c.id !== undefined).map((c) => c.id);
  assert.ok(
    ids.every((id) => typeof id === 'number' && Number.isSafeInteger(id)),
    'ids are ours',
  );
  assert.equal(new Set(ids).size, 3);
});

/** A batch every call of which goes upstream, with plain unique ids (BatchRequest.asIs). */
const PLAIN =
  '[{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x0000000000000000000000000000000000000001","latest"]},\n' +
  ' {"jsonrpc":"2.0","id":"two","method":"eth_blockNumber","params":[]},' +
  '{"jsonrpc":"2.0","id":30,"method":"eth_gasPrice"}]';

test('a batch whose calls all go upstream with plain unique ids reaches the origin byte for byte as the client sent it', async () => {
  firstMode = 'ok';
  const before = forwarded(first).length;
  const answer = await post(app.rpcUrl(), PLAIN);
  assert.equal(answer.status, 200);
  const sent = forwarded(first).slice(before);
  assert.equal(sent.length, 1, 'one upstream request');
  assert.equal(sent[0]?.body, PLAIN, 'the client body itself');
  // The origin answers in reverse: the gateway puts the answers back in request order.
  const answers = JSON.parse(answer.text) as Array<{ id: unknown; result: string }>;
  assert.deepEqual(
    answers.map((a) => [a.id, a.result.split(':')[0]]),
    [
      [1, 'eth_getBalance'],
      ['two', 'eth_blockNumber'],
      [30, 'eth_gasPrice'],
    ],
  );
});

for (const [what, body] of [
  ['duplicate ids', PLAIN.replace('"id":30', '"id":1')],
  ['an id too long for every parser to keep', PLAIN.replace('"id":30', '"id":1234567890123456')],
  ['a negative id', PLAIN.replace('"id":30', '"id":-3')],
  ['a string id with an escape', PLAIN.replace('"id":"two"', '"id":"t\\u0077o"')],
  ['a notification', PLAIN.replace('"id":30,', '')],
] as const) {
  test(`a batch with ${what} goes upstream with ids of ours, and its answers carry the client's ids`, async () => {
    firstMode = 'ok';
    const before = forwarded(first).length;
    const answer = await post(app.rpcUrl(), body);
    assert.equal(answer.status, 200);
    const sent = JSON.parse(forwarded(first).slice(before)[0]?.body ?? '') as Array<{ id?: unknown }>;
    const ours = sent.filter((c) => c.id !== undefined).map((c) => c.id);
    assert.deepEqual(
      ours,
      ours.map((_, i) => i + 1),
      'ids 1..n',
    );
    const clientIds = (JSON.parse(body) as Array<{ id?: unknown }>).filter((c) => 'id' in c).map((c) => c.id);
    assert.deepEqual(
      (JSON.parse(answer.text) as Array<{ id: unknown }>).map((a) => a.id),
      clientIds,
    );
  });
}

test('an origin that answers a client-id batch with ids of its own gets each call again on its own', async () => {
  // A node that renumbers (or normalises) ids answers none of the client's: nothing matches, and the
  // calls go out one by one (every origin tried the batch), so the client still gets every answer.
  const renumbering = await startHttpServer((_req, res, body) => {
    const parsed = JSON.parse(body) as unknown;
    res.setHeader('content-type', 'application/json');
    if (Array.isArray(parsed)) {
      res.end(
        JSON.stringify(parsed.map((c: { method: string }, i) => ({ jsonrpc: '2.0', id: `x${i}`, result: c.method }))),
      );
      return;
    }
    const call = parsed as { id: unknown; method: string };
    res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: call.method }));
  });
  const own = await startApp({
    networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
    pools: [poolOf('p', [renumbering.url])],
  });
  try {
    const answer = await post(own.rpcUrl(), PLAIN);
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.text), [
      { jsonrpc: '2.0', id: 1, result: 'eth_getBalance' },
      { jsonrpc: '2.0', id: 'two', result: 'eth_blockNumber' },
      { jsonrpc: '2.0', id: 30, result: 'eth_gasPrice' },
    ]);
  } finally {
    await own.close();
    await renumbering.close();
  }
});

for (const mode of ['http502', 'garbled', 'object', 'empty-array'] as const) {
  test(`an origin whose batch answer is ${mode} fails as a whole: the batch goes to the next origin`, async () => {
    firstMode = mode;
    const before1 = forwarded(first).length;
    const before2 = batches(second).length;
    const answer = await post(app.rpcUrl(), BODY);
    assert.equal(answer.status, 200);
    expectAnswers(answer.text);
    assert.equal(forwarded(first).length - before1, 1, 'one try on the failing origin');
    assert.equal(batches(second).length - before2, 1, 'one batch on the next origin');
  });
}

test('an answer missing from the origin array is fetched on its own; the rest come from the batch', async () => {
  firstMode = 'drop-last';
  const beforeBatches = batches(first).length;
  const beforeSingles = singles(first).length;
  const answer = await post(app.rpcUrl(), BODY);
  assert.equal(answer.status, 200);
  expectAnswers(answer.text);
  assert.equal(batches(first).length - beforeBatches, 1);
  const alone = singles(first).slice(beforeSingles);
  assert.equal(alone.length, 1, 'one call sent again on its own');
  // The origin answers in reverse and dropped its first answer: that is the batch's last call.
  assert.match(alone[0]?.body ?? '', /"method":"eth_gasPrice"/);
});

test('an answer of an as-is batch that the chain checks turn down (missing state) is fetched on its own; the rest stay', async () => {
  firstMode = 'missing-first';
  const body = `[${[1, 2, 3]
    .map(
      (n) =>
        `{"jsonrpc":"2.0","id":${n},"method":"eth_getBalance","params":["0x${String(n).padStart(40, '0')}","latest"]}`,
    )
    .join(',')}]`;
  const beforeBatches = batches(first).length;
  const beforeSingles = singles(first).length + singles(second).length;
  const answer = await post(app.rpcUrl(), body);
  assert.equal(answer.status, 200);
  const answers = answer.json<Array<{ id: number; result?: string; error?: unknown }>>();
  assert.deepEqual(
    answers.map((a) => [a.id, a.result]),
    [1, 2, 3].map((n) => [n, `eth_getBalance:["0x${String(n).padStart(40, '0')}","latest"]`]),
    'the missing-state error never reaches the client; every call has its result, in order',
  );
  assert.equal(batches(first).length - beforeBatches, 1);
  const alone = [...singles(first), ...singles(second)].slice(beforeSingles);
  assert.equal(alone.length, 1, 'only the turned-down call went out again');
  assert.match(alone[0]?.body ?? '', /"method":"eth_getBalance","params":\["0x0{39}1","latest"\]/);
  firstMode = 'ok';
});

test('a batch with a write is forwarded call by call (the write rule applies per call)', async () => {
  firstMode = 'ok';
  const beforeBatches = batches(first).length;
  const beforeSingles = singles(first).length;
  const answer = await post(
    app.rpcUrl(),
    '[{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"},{"jsonrpc":"2.0","id":2,"method":"eth_sendRawTransaction","params":["0x01"]},{"jsonrpc":"2.0","id":3,"method":"eth_gasPrice"}]',
  );
  assert.equal(answer.status, 200);
  const answers = JSON.parse(answer.text) as Array<{ id: number; result: string }>;
  assert.deepEqual(
    answers.map((a) => [a.id, a.result]),
    [
      [1, 'eth_blockNumber:[]'],
      [2, 'eth_sendRawTransaction:["0x01"]'],
      [3, 'eth_gasPrice:[]'],
    ],
  );
  assert.equal(batches(first).length, beforeBatches, 'no upstream batch');
  assert.equal(singles(first).length - beforeSingles, 3);
});

test('when no origin takes the batch (HTTP 502 to every batch), its calls go out one by one', async () => {
  const refusing = await origin(() => 'http502');
  const app2 = await startApp({
    networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
    pools: [poolOf('p', [refusing.url])],
  });
  try {
    const answer = await post(app2.rpcUrl(), BODY);
    assert.equal(answer.status, 200);
    expectAnswers(answer.text);
    assert.equal(batches(refusing).length, 1, 'one upstream batch tried');
    assert.deepEqual(
      singles(refusing)
        .map((r) => (JSON.parse(r.body) as { method: string }).method)
        .sort(),
      ['eth_getBalance', 'eth_blockNumber', 'eth_blockNumber', 'eth_gasPrice'].sort(),
      'then each call, the notification included, on its own',
    );
  } finally {
    await app2.close();
    await refusing.close();
  }
});

test('when no origin can be reached, each forwarded call gets the upstream error in its slot', async () => {
  const gone = await origin(() => 'ok');
  const url = gone.url;
  await gone.close();
  const app2 = await startApp({
    networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
    pools: [poolOf('p', [url])],
  });
  try {
    const answer = await post(app2.rpcUrl(), BODY);
    assert.equal(answer.status, 200, 'local errors in the batch keep it 200');
    const answers = JSON.parse(answer.text) as Array<{ id: unknown; error?: { code: number } }>;
    assert.equal(answers.length, 5);
    assert.deepEqual(
      answers.map((a) => a.error?.code),
      [-32002, -32002, -32600, -32601, -32002],
    );
    assert.match(answer.text, /^\[\{"jsonrpc":"2.0","id":18446744073709551617,"error"/);
  } finally {
    await app2.close();
  }
});

let anvil: AnvilNode | undefined;
after(async () => anvil?.stop());

test('through a real anvil, an upstream batch answers byte for byte what anvil answers each call', async () => {
  anvil = await startTestAnvil();
  const node = await startApp({
    networks: { sepolia: { chain_id: 31337, pools: ['a'] } },
    pools: [poolOf('a', [anvil.url])],
    gateway: { cache_max_bytes: 0 },
  });
  try {
    const calls = [
      '{"jsonrpc":"2.0","id":"x","method":"eth_blockNumber","params":[]}',
      '{"jsonrpc":"2.0","id":99999999999999999999,"method":"eth_getBalance","params":["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","latest"]}',
      '{"jsonrpc":"2.0","id":3,"method":"eth_getBlockByNumber","params":["0x0",false]}',
      '{"jsonrpc":"2.0","id":4,"method":"eth_call","params":[{"to":"0x0000000000000000000000000000000000000000","data":"0x"},"latest"]}',
    ];
    // anvil itself refuses an id beyond 2^64 (the gateway never sends it one): ask it directly with id 2.
    const direct = await Promise.all(
      calls.map((c) => post(anvil?.url as string, c.replace('"id":99999999999999999999', '"id":2'))),
    );
    const expected = direct.map((d) => d.text.replace('"id":2,', '"id":99999999999999999999,'));
    const answer = await post(node.rpcUrl(), `[${calls.join(',')}]`);
    assert.equal(answer.status, 200);
    assert.equal(answer.text, `[${expected.join(',')}]`);
  } finally {
    await node.close();
  }
});
