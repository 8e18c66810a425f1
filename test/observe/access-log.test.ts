/**
 * The access log (SPEC §16), `gateway.access_log`: with `all` one line per HTTP request and per WebSocket
 * message with every documented field; with `errors` (the default) only requests answered ≥ 400 or whose
 * answer holds an error the gateway made — an origin's own error answer passing through is none. No line
 * holds the API key, nor the origin's password or query key. The origin is a real node:http server that
 * passes calls on to a real anvil and answers eth_sign with its own error.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/log.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { post, relay, startHttpServer, type TestServer } from '../helpers/http.js';
import { WsRpcClient } from '../helpers/ws-client.js';

const KEY = 'swk_static_key_value_0123456789';
const PASSWORD = 'origin-password-xyz';
const QUERY_KEY = 'query-key-abc';

let anvil: AnvilNode;
let origin: TestServer;

async function passOn(_req: http.IncomingMessage, res: http.ServerResponse, body: string): Promise<void> {
  const call = JSON.parse(body) as { id?: unknown; method?: string };
  if (call.method === 'eth_sign') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32000, message: 'locked' } }));
    return;
  }
  await relay(res, anvil.url, body);
}

before(async () => {
  anvil = await startTestAnvil();
  origin = await startHttpServer(passOn);
});

after(async () => {
  await origin?.close();
  await anvil?.stop();
});

/** An app with this access_log mode (undefined: the default), its access lines and every log line. */
async function appWith(mode: string | undefined) {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const address = `http://user:${PASSWORD}@127.0.0.1:${origin.port}/rpc?apikey=${QUERY_KEY}`;
  const app: TestApp = await startApp(
    {
      gateway: { api_keys: [KEY], ...(mode === undefined ? {} : { access_log: mode }) },
      networks: { sepolia: { chain_id: 11155111, pools: ['main'] } },
      pools: [{ name: 'main', origins: [{ name: 'relay', address }] }],
    },
    {
      logger: createLogger({
        level: 'info',
        write: (line) => {
          raw.push(line);
          lines.push(JSON.parse(line));
        },
      }),
    },
  );
  const access = () => lines.filter((line) => line.msg === 'access');
  return { app, access, raw };
}

const call = (method: string, params: unknown[] = [], id: unknown = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });
const AUTH = { authorization: `Bearer ${KEY}` };

/** Bounded wait: the line is written once the answer has gone, just after the client has it. */
async function lineOf(access: () => Array<Record<string, unknown>>, requestId: string) {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const line = access().find((l) => l.request_id === requestId);
    if (line !== undefined || Date.now() > deadline) return line;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('access_log: all', () => {
  let app: TestApp;
  let access: () => Array<Record<string, unknown>>;
  let raw: string[];
  before(async () => {
    ({ app, access, raw } = await appWith('all'));
  });
  after(() => app?.close());

  it('writes one line per HTTP request with every documented field', async () => {
    const body = call('eth_accounts');
    const res = await post(app.rpcUrl(), body, { ...AUTH, 'x-request-id': 'all-1' });
    assert.equal(res.status, 200);
    const line = await lineOf(access, 'all-1');
    assert.ok(line, 'a line for a plain successful call');
    assert.equal(line.level, 'info');
    assert.equal(line.part, 'access');
    assert.match(String(line.time), /^\d{4}-\d\d-\d\dT/);
    assert.equal(line.transport, 'http');
    assert.equal(line.network, 'sepolia');
    assert.match(String(line.key), /^static:[0-9a-f]{32}$/, 'the key by its identity, never its value');
    assert.deepEqual(line.methods, ['eth_accounts']);
    assert.equal(line.status, 200);
    assert.deepEqual(line.error_codes, []);
    assert.deepEqual(line.origins, ['main/relay']);
    assert.equal(line.bytes_in, Buffer.byteLength(body));
    assert.equal(line.bytes_out, Buffer.byteLength(res.text));
    assert.equal(typeof line.duration_ms, 'number');
    assert.ok((line.duration_ms as number) >= 0);
    assert.equal(access().filter((l) => l.request_id === 'all-1').length, 1, 'one line per request');
  });

  it('names at most 10 methods, then how many more', async () => {
    const calls = Array.from({ length: 12 }, (_, i) => call(i === 11 ? 'eth_blockNumber' : 'eth_chainId', [], i));
    await post(app.rpcUrl(), `[${calls.join(',')}]`, { ...AUTH, 'x-request-id': 'all-batch' });
    const line = await lineOf(access, 'all-batch');
    assert.ok(line, 'a line for the batch');
    assert.equal((line.methods as string[]).length, 10);
    assert.equal(line.more_methods, 2);
  });

  it('writes one line per WebSocket message, with its connection', async () => {
    const ws = await WsRpcClient.open(`${app.rpcUrl().replace(/^http/, 'ws')}?key=${KEY}`);
    await ws.result('eth_chainId');
    ws.close();
    const deadline = Date.now() + 5_000;
    let line: Record<string, unknown> | undefined;
    while (line === undefined && Date.now() < deadline) {
      line = access().find((l) => l.transport === 'ws' && (l.methods as string[]).includes('eth_chainId'));
      if (line === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(line, 'a line for the message');
    const handshake = access().find((l) => l.transport === 'ws' && l.status === 101);
    assert.ok(handshake, 'and one for the handshake');
    assert.equal(line.connection_id, handshake.request_id);
    assert.notEqual(line.request_id, handshake.request_id);
    assert.match(String(line.key), /^static:/);
  });

  it('holds no key and no origin secret', () => {
    const all = raw.join('');
    assert.ok(!all.includes(KEY), 'the API key');
    assert.ok(!all.includes(PASSWORD), "the origin's password");
    assert.ok(!all.includes(QUERY_KEY), "the origin's query key");
  });
});

describe('access_log: errors (the default)', () => {
  let app: TestApp;
  let access: () => Array<Record<string, unknown>>;
  let raw: string[];
  before(async () => {
    ({ app, access, raw } = await appWith(undefined));
  });
  after(() => app?.close());

  it("writes lines for refusals and gateway errors, none for answers or an origin's own error", async () => {
    assert.equal((await post(app.rpcUrl(), call('eth_chainId'), { ...AUTH, 'x-request-id': 'ok-1' })).status, 200);
    const sign = await post(app.rpcUrl(), call('eth_sign', ['0x1', '0x2']), { ...AUTH, 'x-request-id': 'origin-err' });
    assert.match(sign.text, /"locked"/);
    const refused = await post(app.rpcUrl(), call('admin_peers'), { ...AUTH, 'x-request-id': 'refused-1' });
    const unauthorized = await post(app.rpcUrl(), call('eth_chainId'), {
      authorization: 'Bearer wrong-key-0123456789abcdef',
      'x-request-id': 'bad-key',
    });
    assert.equal(unauthorized.status, 401);
    const batch = `[${call('eth_chainId', [], 1)},${call('made_up_method', [], 2)}]`;
    assert.equal((await post(app.rpcUrl(), batch, { ...AUTH, 'x-request-id': 'batch-err' })).status, 200);

    const refusedLine = await lineOf(access, 'refused-1');
    assert.deepEqual(refusedLine?.error_codes, [-32601]);
    assert.equal(refusedLine?.status, refused.status);
    const keyLine = await lineOf(access, 'bad-key');
    assert.equal(keyLine?.status, 401);
    assert.equal(keyLine?.key, null);
    assert.deepEqual(keyLine?.error_codes, [-32003]);
    const batchLine = await lineOf(access, 'batch-err');
    assert.equal(batchLine?.status, 200, 'a 200 whose answer holds a gateway error');
    assert.deepEqual(batchLine?.methods, ['eth_chainId', 'made_up_method']);
    assert.deepEqual(batchLine?.error_codes, [-32601]);
    assert.equal(
      access().find((l) => l.request_id === 'ok-1'),
      undefined,
      'no line for an answered call',
    );
    assert.equal(
      access().find((l) => l.request_id === 'origin-err'),
      undefined,
      "no line for an origin's error",
    );
    assert.ok(!raw.join('').includes('wrong-key-0123456789abcdef'), 'not even a refused key');
  });
});
