/**
 * The gateway against one real anvil origin: every row of the error table that needs no failing origin,
 * byte-exact ids, batches, method policy and param checks, metrics. (Failing origins: failover.test.ts.
 * Real clients: clients.test.ts. Both sides of a retirement date: lifecycle.test.ts.)
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { scanJson } from '../../src/gateway/rpc/json-scan.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { post, type RpcAnswer, send } from '../helpers/http.js';

let node: AnvilNode;
let app: TestApp;

before(async () => {
  node = await startTestAnvil();
  app = await startApp({
    networks: {
      sepolia: { chain_id: 11155111, pools: ['main'] },
      rinkeby: { chain_id: 4, retired_on: '2023-01-30', replacement: 'sepolia' },
      open: {
        chain_id: 11155111,
        pools: ['main'],
        allow_methods: ['anvil_*', 'debug_traceCall'],
        deny_methods: ['eth_accounts'],
      },
      empty: { chain_id: 1, pools: ['pool-that-does-not-exist'] },
    },
    pools: [poolOf('main', [node.url])],
    gateway: { max_body_bytes: 4096, max_batch: 5 },
  });
});

after(async () => {
  await app?.close();
  await node?.stop();
});

const req = (method: string, params: unknown[] = [], id: unknown = 1): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

/** The raw bytes of a response's top-level id. */
function rawId(text: string): string {
  const buf = Buffer.from(text);
  const scanned = scanJson(buf);
  const id = scanned?.members.find((m) => m.key === 'id');
  assert.ok(id, `no id in ${text}`);
  return buf.subarray(id.value.start, id.value.end).toString();
}

async function expectError(
  res: Awaited<ReturnType<typeof post>>,
  status: number,
  code: number,
): Promise<RpcAnswer['error'] & {}> {
  assert.equal(res.status, status, res.text);
  assert.equal(res.headers['content-type'], 'application/json');
  const answer = res.json<RpcAnswer>();
  assert.equal(answer.jsonrpc, '2.0');
  assert.ok(answer.error, res.text);
  assert.equal(answer.error.code, code, res.text);
  assert.ok(answer.error.message.length > 20, 'message says what to do');
  return answer.error;
}

describe('error table', () => {
  it('body is not JSON → 400 / -32700', async () => {
    const res = await post(app.rpcUrl(), '{"jsonrpc":"2.0","method":');
    await expectError(res, 400, -32700);
    assert.equal(rawId(res.text), 'null');
  });

  it('body is not valid UTF-8 → 400 / -32700', async () => {
    const res = await post(app.rpcUrl(), Buffer.from([0x22, 0xff, 0xfe, 0x22]));
    await expectError(res, 400, -32700);
  });

  it('not a valid request object (single) → 400 / -32600, id echoed when valid', async () => {
    for (const [body, id] of [
      ['{"jsonrpc":"2.0","id":7}', '7'],
      ['{"jsonrpc":"1.0","method":"eth_chainId","id":"x"}', '"x"'],
      ['{"jsonrpc":"2.0","method":"","id":8}', '8'],
      ['{"jsonrpc":"2.0","method":"eth_chainId","params":"0x1","id":9}', '9'],
      ['{"jsonrpc":"2.0","method":"eth_chainId","id":{"a":1}}', 'null'],
      ['{"jsonrpc":"2.0","method":"eth_chainId","id":1,"id":2}', 'null'],
      ['"hello"', 'null'],
      ['42', 'null'],
    ] as const) {
      const res = await post(app.rpcUrl(), body);
      await expectError(res, 400, -32600);
      assert.equal(rawId(res.text), id, body);
    }
  });

  it('empty batch → 400 / -32600', async () => {
    await expectError(await post(app.rpcUrl(), '[]'), 400, -32600);
  });

  it('invalid element inside a batch → 200, that element only', async () => {
    const res = await post(app.rpcUrl(), `[${req('eth_chainId', [], 1)},{"foo":"boo"},${req('eth_chainId', [], 2)}]`);
    assert.equal(res.status, 200);
    const answers = res.json<RpcAnswer[]>();
    assert.equal(answers.length, 3);
    assert.equal(answers[0]?.result, '0xaa36a7');
    assert.equal(answers[1]?.error?.code, -32600);
    assert.equal(answers[1]?.id, null);
    assert.equal(answers[2]?.result, '0xaa36a7');
  });

  it('method not allowed or unknown → 200 / -32601', async () => {
    for (const method of [
      'admin_nodeInfo',
      'debug_traceTransaction',
      'personal_sign',
      'miner_start',
      'txpool_content',
      'engine_newPayloadV4',
      'eth_subscribe',
      'eth_unsubscribe',
      'eth_doesNotExist',
      'foo',
    ]) {
      const error = await expectError(await post(app.rpcUrl(), req(method)), 200, -32601);
      assert.match(error.message, new RegExp(method));
    }
  });

  it('invalid params (checked methods) → 200 / -32602', async () => {
    const cases: Array<[string, unknown[]]> = [
      ['eth_getBlockByNumber', ['0x01', false]],
      ['eth_getBlockByNumber', ['0x', false]],
      ['eth_getBlockByNumber', ['1a', false]],
      ['eth_getBlockByNumber', ['0x0']],
      ['eth_getBlockByNumber', ['0x0', 'false']],
      ['eth_getBlockByNumber', ['newest', false]],
      ['eth_getBalance', ['0x0000000000000000000000000000000000000000', '0x00']],
      ['eth_call', [{ to: '0x0000000000000000000000000000000000000000' }, 12]],
      ['eth_feeHistory', ['0x1']],
      ['eth_getLogs', [{ fromBlock: '0x01' }]],
      ['eth_getTransactionByBlockNumberAndIndex', ['0X1', '0x0']],
    ];
    for (const [method, params] of cases) {
      const error = await expectError(await post(app.rpcUrl(), req(method, params)), 200, -32602);
      assert.match(error.message, new RegExp(method), JSON.stringify(params));
    }
  });

  it('valid block parameters pass the checks', async () => {
    const zero = '0x0000000000000000000000000000000000000000';
    const genesis = (await post(app.rpcUrl(), req('eth_getBlockByNumber', ['0x0', false]))).json<RpcAnswer>();
    const hash = (genesis.result as { hash: string }).hash;
    const cases: Array<[string, unknown[]]> = [
      ['eth_getBlockByNumber', ['0x0', false]],
      ['eth_getBlockByNumber', ['latest', true]],
      ['eth_getBlockByNumber', ['earliest', false]],
      ['eth_getBlockByNumber', ['pending', false]],
      ['eth_getBalance', [zero, 'latest']],
      ['eth_getBalance', [zero, hash]],
      ['eth_getBalance', [zero, { blockHash: hash, requireCanonical: true }]],
      ['eth_getCode', [zero, '0x0']],
      ['eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]],
    ];
    for (const [method, params] of cases) {
      const answer = (await post(app.rpcUrl(), req(method, params))).json<RpcAnswer>();
      assert.equal(answer.error, undefined, `${method} ${JSON.stringify(params)}: ${JSON.stringify(answer.error)}`);
    }
  });

  it('unknown network → 404 / -32001', async () => {
    const error = await expectError(await post(app.rpcUrl('goerli'), req('eth_chainId', [], 5)), 404, -32001);
    assert.match(error.message, /goerli/);
    await expectError(await post(app.rpcUrl('goerli'), '{"jsonrpc":'), 404, -32001);
  });

  it('retired network → 410 / -32001 with data {retired_on, replacement}', async () => {
    const res = await post(app.rpcUrl('rinkeby'), req('eth_chainId', [], 12345678901234567890n.toString()));
    const error = await expectError(res, 410, -32001);
    const request_id = res.headers['x-request-id'];
    assert.deepEqual(error.data, { retired_on: '2023-01-30', replacement: 'sepolia', request_id });
    assert.match(error.message, /2023-01-30/);
    assert.match(error.message, /\/v1\/sepolia/);
    assert.equal(res.headers.link, '</v1/sepolia>; rel="successor-version"');
  });

  it('wrong HTTP method → 405 + Allow: POST / -32600', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await send(app.rpcUrl(), { method });
      await expectError(res, 405, -32600);
      assert.equal(res.headers.allow, 'POST');
    }
  });

  it('Content-Type not JSON → 415 / -32600', async () => {
    await expectError(await post(app.rpcUrl(), req('eth_chainId'), { 'content-type': 'text/plain' }), 415, -32600);
    await expectError(await send(app.rpcUrl(), { body: req('eth_chainId') }), 415, -32600);
    const ok = await post(app.rpcUrl(), req('eth_chainId'), { 'content-type': 'application/json; charset=utf-8' });
    assert.equal(ok.status, 200);
    const anyCase = await post(app.rpcUrl(), req('eth_chainId'), { 'content-type': 'Application/JSON' });
    assert.equal(anyCase.status, 200);
  });

  it('body over max_body_bytes → 413 / -32005', async () => {
    const big = req('eth_call', [{ data: `0x${'00'.repeat(4096)}` }, 'latest']);
    await expectError(await post(app.rpcUrl(), big), 413, -32005);
  });

  it('batch over max_batch → 413 / -32005', async () => {
    const batch = `[${Array.from({ length: 6 }, (_, i) => req('eth_chainId', [], i)).join(',')}]`;
    await expectError(await post(app.rpcUrl(), batch), 413, -32005);
  });

  it('no healthy origin in any pool (pool missing) → 503 / -32002', async () => {
    const error = await expectError(await post(app.rpcUrl('empty'), req('eth_chainId')), 503, -32002);
    assert.match(error.message, /pool-that-does-not-exist/);
  });

  it("an origin's own JSON-RPC error → 200, passed through byte for byte", async () => {
    const body = req('eth_getBalance', ['0xnot-an-address', 'latest'], 'same-id');
    const direct = await post(node.url, body);
    const via = await post(app.rpcUrl(), body);
    assert.equal(via.status, 200);
    assert.ok(via.json<RpcAnswer>().error, via.text);
    assert.equal(via.text, direct.text);
  });

  it('a malformed network segment is an unknown network, not a crash', async () => {
    await expectError(await post(`${app.gatewayUrl}/v1/%E0%A4%A`, req('eth_chainId')), 404, -32001);
  });

  it('unknown path → 404', async () => {
    await expectError(await post(`${app.gatewayUrl}/v2/sepolia`, req('eth_chainId')), 404, -32600);
    await expectError(await post(`${app.gatewayUrl}/`, req('eth_chainId')), 404, -32600);
  });
});

describe('metrics', () => {
  it('counts gateway requests and upstream attempts at the API listener /metrics', async () => {
    await post(app.rpcUrl(), req('eth_chainId'));
    await post(app.rpcUrl('no-such-network'), req('eth_chainId'));
    const res = await send(app.apiUrl.replace(/\/client\/v4$/, '/metrics'), { method: 'GET' });
    assert.equal(res.status, 200);
    assert.match(res.text, /switchyard_gateway_requests_total\{network="sepolia",status="200"\} \d+/);
    assert.match(res.text, /switchyard_gateway_requests_total\{network="unknown",status="404"\} \d+/);
    assert.match(res.text, /switchyard_gateway_upstream_attempts_total\{network="sepolia",result="ok"\} \d+/);
    assert.ok(!res.text.includes(node.url), 'no origin address in metrics');
  });
});

describe('ids come back exactly as sent', () => {
  const ids = [
    '18446744073709551615',
    '12345678901234567890123',
    '1e400',
    '-0',
    '1.50',
    '0',
    '"abc"',
    '""',
    '"\\u00e9\\"quoted\\"\\n"',
    '"é😀"',
    'null',
  ];

  it('single requests', async () => {
    for (const id of ids) {
      const res = await post(app.rpcUrl(), `{"jsonrpc":"2.0","method":"eth_chainId","params":[],"id":${id}}`);
      assert.equal(res.status, 200, res.text);
      assert.equal(rawId(res.text), id);
    }
  });

  it('error answers', async () => {
    for (const id of ids) {
      const res = await post(app.rpcUrl(), `{"jsonrpc":"2.0","method":"admin_peers","id":${id}}`);
      assert.equal(rawId(res.text), id);
    }
  });

  it('batches, element by element', async () => {
    const body = `[${ids
      .map((id) => `{"jsonrpc":"2.0","method":"eth_chainId","id":${id}}`)
      .slice(0, 5)
      .join(' , ')}]`;
    const res = await post(app.rpcUrl(), body);
    const text = Buffer.from(res.text);
    const scanned = scanJson(text);
    assert.ok(scanned);
    const got = scanned.elements.map((element) => {
      const inner = scanJson(text, element.start, element.end);
      const id = inner?.members.find((m) => m.key === 'id');
      return id ? text.subarray(id.value.start, id.value.end).toString() : undefined;
    });
    assert.deepEqual(got, ids.slice(0, 5));
  });

  it("the rest of the origin's body passes through byte for byte", async () => {
    const body = req('eth_getBlockByNumber', ['0x0', true], 'genesis');
    const direct = await post(node.url, body);
    const via = await post(app.rpcUrl(), body);
    assert.equal(via.text, direct.text);
    const big = `{"jsonrpc":"2.0","method":"eth_getBlockByNumber","params":["0x0",true],"id":18446744073709551615}`;
    const viaBig = await post(app.rpcUrl(), big);
    assert.equal(viaBig.text, direct.text.replace('"genesis"', '18446744073709551615'));
  });
});

describe('ids on every path: 2^64−1, a string and null come back as sent', () => {
  const IDS = ['18446744073709551615', '"a string id"', 'null'];
  const call = (id: string, method: string, params = '[]', version = '"2.0"') =>
    `{"jsonrpc":${version},"method":"${method}","params":${params},"id":${id}}`;

  it('single requests: success, refused method, invalid params, invalid request, network errors', async () => {
    for (const id of IDS) {
      const cases: Array<[string, string, number, number | undefined]> = [
        [app.rpcUrl(), call(id, 'eth_chainId'), 200, undefined],
        [app.rpcUrl(), call(id, 'admin_peers'), 200, -32601],
        [app.rpcUrl(), call(id, 'eth_nope'), 200, -32601],
        [app.rpcUrl(), call(id, 'eth_getBlockByNumber', '["0x01",false]'), 200, -32602],
        [app.rpcUrl(), call(id, 'eth_chainId', '[]', '"1.0"'), 400, -32600],
        [app.rpcUrl('goerli'), call(id, 'eth_chainId'), 404, -32001],
        [app.rpcUrl('rinkeby'), call(id, 'eth_chainId'), 410, -32001],
        [app.rpcUrl('empty'), call(id, 'eth_chainId'), 503, -32002],
      ];
      for (const [url, body, status, code] of cases) {
        const res = await post(url, body);
        assert.equal(res.status, status, `${body} → ${res.text}`);
        assert.equal(res.json<RpcAnswer>().error?.code, code, res.text);
        assert.equal(rawId(res.text), id, body);
      }
    }
  });

  it('batch elements: success, refused method, invalid params, invalid element, each with its own id', async () => {
    for (const id of IDS) {
      const body = `[${[
        call(id, 'eth_chainId'),
        call(id, 'debug_traceTransaction'),
        call(id, 'eth_getBalance', '["0x0000000000000000000000000000000000000000","0x01"]'),
        call(id, 'eth_chainId', '[]', '"1.0"'),
      ].join(',')}]`;
      const res = await post(app.rpcUrl(), body);
      assert.equal(res.status, 200, res.text);
      const text = Buffer.from(res.text);
      const scanned = scanJson(text);
      assert.ok(scanned?.kind === 'array', res.text);
      const got = scanned.elements.map((element) => {
        const inner = scanJson(text, element.start, element.end);
        const found = inner?.members.find((m) => m.key === 'id');
        assert.ok(found, 'every element has an id');
        const answer = JSON.parse(text.subarray(element.start, element.end).toString()) as RpcAnswer;
        return [text.subarray(found.value.start, found.value.end).toString(), answer.error?.code ?? 'ok'];
      });
      assert.deepEqual(got, [
        [id, 'ok'],
        [id, -32601],
        [id, -32602],
        [id, -32600],
      ]);
    }
  });
});

describe('limits while streaming', () => {
  it('a chunked body that grows past max_body_bytes → 413 / -32005', async () => {
    async function* chunks() {
      yield '{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"data":"0x';
      for (let i = 0; i < 8; i += 1) yield '00'.repeat(512);
      yield '"},"latest"]}';
    }
    const res = await request(app.rpcUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Readable.from(chunks()),
    });
    const text = await res.body.text();
    assert.equal(res.statusCode, 413, text);
    assert.equal((JSON.parse(text) as RpcAnswer).error?.code, -32005);
  });
});

describe('batches', () => {
  it('keep request order; notifications get no element', async () => {
    const body = `[${req('eth_chainId', [], 'first')},{"jsonrpc":"2.0","method":"eth_blockNumber"},{"x":1},${req('eth_getBlockByNumber', ['0x0', false], 'third')},${req('eth_nope', [], 4)}]`;
    const res = await post(app.rpcUrl(), body);
    assert.equal(res.status, 200);
    const answers = res.json<RpcAnswer[]>();
    assert.deepEqual(
      answers.map((a) => [a.id, a.error?.code ?? 'ok']),
      [
        ['first', 'ok'],
        [null, -32600],
        ['third', 'ok'],
        [4, -32601],
      ],
    );
  });

  it('a batch of only notifications → 204, no body', async () => {
    const res = await post(
      app.rpcUrl(),
      '[{"jsonrpc":"2.0","method":"eth_chainId"},{"jsonrpc":"2.0","method":"eth_blockNumber","params":[]}]',
    );
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
  });

  it('a single notification → 204, no body (even when refused)', async () => {
    for (const method of ['eth_chainId', 'admin_peers']) {
      const res = await post(app.rpcUrl(), `{"jsonrpc":"2.0","method":"${method}"}`);
      assert.equal(res.status, 204);
      assert.equal(res.text, '');
    }
  });
});

describe('method policy per network', () => {
  it('allow_methods opens namespaces and names; deny_methods closes standard ones', async () => {
    const mined = (await post(app.rpcUrl('open'), req('anvil_mine', ['0x1']))).json<RpcAnswer>();
    assert.equal(mined.error, undefined, JSON.stringify(mined));
    const denied = (await post(app.rpcUrl('open'), req('eth_accounts'))).json<RpcAnswer>();
    assert.equal(denied.error?.code, -32601);
    assert.match(denied.error?.message ?? '', /disabled on network open/);
    const allowedElsewhere = (await post(app.rpcUrl('sepolia'), req('eth_accounts'))).json<RpcAnswer>();
    assert.ok(Array.isArray(allowedElsewhere.result));
    const stillRefused = (await post(app.rpcUrl('open'), req('debug_traceTransaction', ['0x00']))).json<RpcAnswer>();
    assert.equal(stillRefused.error?.code, -32601);
  });

  it('allow_methods lets one method of a refused namespace through, on that network only', async () => {
    const params = [{ to: '0x0000000000000000000000000000000000000000' }, 'latest'];
    const traced = (await post(app.rpcUrl('open'), req('debug_traceCall', params))).json<RpcAnswer>();
    assert.equal(traced.error, undefined, JSON.stringify(traced));
    assert.ok(traced.result, 'anvil answered the trace');
    for (const [method, callParams] of [
      ['debug_traceCall', params],
      ['anvil_mine', ['0x1']],
    ] as const) {
      const refused = (await post(app.rpcUrl('sepolia'), req(method, [...callParams]))).json<RpcAnswer>();
      assert.equal(refused.error?.code, -32601, `${method} on sepolia: ${JSON.stringify(refused)}`);
    }
  });

  it('standard execution-API methods reach the origin', async () => {
    for (const method of [
      'eth_chainId',
      'eth_blockNumber',
      'eth_gasPrice',
      'net_version',
      'web3_clientVersion',
      'eth_syncing',
    ]) {
      const answer = (await post(app.rpcUrl(), req(method))).json<RpcAnswer>();
      assert.equal(answer.error, undefined, `${method}: ${JSON.stringify(answer.error)}`);
    }
  });
});
