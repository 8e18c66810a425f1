/**
 * Request ids end to end (SPEC §16), through a whole app with a real node:http origin on port 0 that
 * records the X-Request-Id it receives (and passes head polls on to a real anvil): a client's id is kept,
 * else one is made; it comes back in X-Request-Id on gateway and API answers, reaches the origin, is in
 * `data.request_id` of the gateway's own errors (never in an origin's error answer, which passes through
 * byte for byte) and in every log line of a failed call. Over WebSocket the handshake answers with its
 * id and each message gets one of its own.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { createLogger } from '../../src/log.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { post, relay, send, startHttpServer, type TestServer } from '../helpers/http.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The origin's own error answer to eth_sign, passed through untouched. */
const ORIGIN_ERROR = { code: -32000, message: 'origin refuses to sign', data: { reason: 'locked' } };

let anvil: AnvilNode;
let origin: TestServer;
let app: TestApp;
const lines: Array<Record<string, unknown>> = [];
/** The X-Request-Id of each client call the origin received, by JSON-RPC method. */
const received: Array<{ method: string; requestId: string | undefined }> = [];

async function originHandler(req: http.IncomingMessage, res: http.ServerResponse, body: string): Promise<void> {
  const call = JSON.parse(body) as { id?: unknown; method?: string };
  const header = req.headers['x-request-id'];
  const requestId = typeof header === 'string' ? header : undefined;
  if (call.method === 'eth_accounts' || call.method === 'eth_sign') received.push({ method: call.method, requestId });
  if (call.method === 'eth_sign') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: ORIGIN_ERROR }));
    return;
  }
  await relay(res, anvil.url, body);
}

before(async () => {
  anvil = await startTestAnvil();
  origin = await startHttpServer(originHandler);
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const closedPort = (closed.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  app = await startApp(
    {
      networks: {
        sepolia: { chain_id: 11155111, pools: ['main'] },
        broken: { chain_id: 11155111, pools: ['gone'] },
      },
      pools: [
        { name: 'main', origins: [{ name: 'recorder', address: origin.url }] },
        { name: 'gone', origins: [{ name: 'closed', address: `http://127.0.0.1:${closedPort}` }] },
      ],
    },
    { logger: createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line)) }) },
  );
});

after(async () => {
  await app?.close();
  await origin?.close();
  await anvil?.stop();
});

const call = (method: string, params: unknown[] = [], id: unknown = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

describe('request ids', () => {
  it("keeps the client's X-Request-Id, returns it and passes it to the origin", async () => {
    const res = await post(app.rpcUrl(), call('eth_accounts'), { 'x-request-id': 'client-call-1' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-request-id'], 'client-call-1');
    assert.deepEqual(received.at(-1), { method: 'eth_accounts', requestId: 'client-call-1' });
  });

  it('makes one when none (or an unusable one) is sent, and the origin gets that one', async () => {
    for (const sent of [undefined, 'has a space', 'x'.repeat(129)]) {
      const res = await post(app.rpcUrl(), call('eth_accounts'), sent === undefined ? {} : { 'x-request-id': sent });
      const made = res.headers['x-request-id'] ?? '';
      assert.match(made, UUID, String(sent));
      assert.deepEqual(received.at(-1), { method: 'eth_accounts', requestId: made });
    }
  });

  it("puts the id in data.request_id of the gateway's errors, never in an origin's own error answer", async () => {
    const refused = await post(app.rpcUrl(), call('admin_peers'), { 'x-request-id': 'refused-1' });
    assert.equal(refused.headers['x-request-id'], 'refused-1');
    const error = refused.json<{ error: { code: number; data: Record<string, unknown> } }>().error;
    assert.equal(error.code, -32601);
    assert.equal(error.data.request_id, 'refused-1');

    const batch = await post(app.rpcUrl(), `[${call('admin_peers', [], 1)},${call('eth_sign', ['0x1', '0x2'], 2)}]`, {
      'x-request-id': 'batch-1',
    });
    const [own, origins] = batch.json<Array<{ error: { data: Record<string, unknown> } }>>();
    assert.equal(own?.error.data.request_id, 'batch-1');
    assert.deepEqual(origins?.error, ORIGIN_ERROR, "the origin's error passes through as it came");

    const single = await post(app.rpcUrl(), call('eth_sign', ['0x1', '0x2'], 7), { 'x-request-id': 'sign-1' });
    assert.equal(single.text, JSON.stringify({ jsonrpc: '2.0', id: 7, error: ORIGIN_ERROR }));
    assert.deepEqual(received.at(-1), { method: 'eth_sign', requestId: 'sign-1' });

    const edge = await post(app.rpcUrl(), call('eth_accounts'), {
      'x-request-id': 'edge-1',
      'content-type': 'text/plain',
    });
    assert.equal(edge.status, 415);
    assert.equal(edge.json<{ error: { data: { request_id: string } } }>().error.data.request_id, 'edge-1');
  });

  it('carries the id in every log line of a failed call', async () => {
    const res = await post(app.rpcUrl('broken'), call('eth_accounts'), { 'x-request-id': 'failing-call-1' });
    assert.equal(res.status, 502);
    assert.equal(res.json<{ error: { data: { request_id: string } } }>().error.data.request_id, 'failing-call-1');
    const about = lines.filter((line) => JSON.stringify(line).includes('failing-call-1'));
    const attempt = about.find((line) => line.msg === 'origin attempt failed');
    assert.ok(attempt, `the failed attempt is logged with the id: ${JSON.stringify(about)}`);
    assert.equal(attempt.request_id, 'failing-call-1');
    assert.equal(attempt.level, 'warn');
    for (const line of about) assert.equal(line.request_id, 'failing-call-1', JSON.stringify(line));
  });

  it('returns an id on management API answers, the client’s when usable', async () => {
    const base = app.apiUrl;
    const mine = await send(`${base}/user/tokens/verify`, { method: 'GET', headers: { 'x-request-id': 'api-call-1' } });
    assert.equal(mine.status, 401);
    assert.equal(mine.headers['x-request-id'], 'api-call-1');
    const made = await send(`${base}/user/tokens/verify`, { method: 'GET' });
    assert.match(made.headers['x-request-id'] ?? '', UUID);
    const metrics = await send(base.replace(/\/client\/v4$/, '/metrics'), { method: 'GET' });
    assert.match(metrics.headers['x-request-id'] ?? '', UUID);
  });

  it('WebSocket: the handshake answers with its id; each message has its own, in errors and at the origin', async () => {
    const ws = new WebSocket(app.rpcUrl().replace(/^http/, 'ws'), { headers: { 'x-request-id': 'socket-1' } });
    let handshake: http.IncomingMessage | undefined;
    ws.once('upgrade', (res) => {
      handshake = res;
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    assert.equal(handshake?.headers['x-request-id'], 'socket-1');
    const answers: Array<{ id: number; error?: { data: { request_id: string } } }> = [];
    ws.on('message', (data) => answers.push(JSON.parse(String(data))));
    ws.send(call('admin_peers', [], 1));
    ws.send(call('eth_accounts', [], 2));
    const deadline = Date.now() + 10_000;
    while (answers.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    ws.close();
    const refused = answers.find((answer) => answer.id === 1);
    assert.match(refused?.error?.data.request_id ?? '', UUID, 'a message gets an id made for it');
    const forwarded = received.at(-1);
    assert.equal(forwarded?.method, 'eth_accounts');
    assert.match(forwarded?.requestId ?? '', UUID);
    assert.notEqual(forwarded?.requestId, refused?.error?.data.request_id, 'one id per message');
  });
});
