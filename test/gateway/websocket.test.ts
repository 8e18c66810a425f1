/**
 * WebSocket on the gateway listener (SPEC §10) against one real anvil origin, with a raw `ws` client:
 * handshake refusals (404, 410 with the HTTP body, 401 / ?key=, per-client connections), the same
 * answer bytes as HTTP (ids byte for byte, 2^64−1), batches, refused methods, limits (max_batch,
 * max_body_bytes → 1009, subscriptions per connection), eth_subscribe/eth_unsubscribe through a small
 * in-test hub, slow consumer → 1008, ping/pong, shutdown → 1001 after the answer in flight, and viem's
 * webSocket transport.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as connectSocket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createPublicClient, webSocket } from 'viem';
import WebSocket from 'ws';
import { SwitchyardError } from '../../src/errors/base.js';
import type { SubscriptionDeps } from '../../src/gateway/gateway.js';
import type { SubscriptionSink } from '../../src/gateway/rpc/subscriptions-port.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { post, send, startHttpServer } from '../helpers/http.js';
import { makeSelfSignedCert } from '../helpers/tls.js';

/** A small hub: numbered ids, the sinks kept so a test can push notifications. */
class FakeHub {
  readonly sinks = new Map<string, SubscriptionSink>();
  readonly ended: string[] = [];
  /** Runs after each subscribe (a test pushes a notification at once with it). */
  onSubscribe: ((id: string, sink: SubscriptionSink) => void) | undefined;
  #next = 1;
  subscribe(_network: string, params: unknown, sink: SubscriptionSink): string {
    const kind = Array.isArray(params) ? params[0] : undefined;
    if (kind !== 'newHeads' && kind !== 'logs' && kind !== 'newPendingTransactions') {
      throw new SwitchyardError('RPC_INVALID_PARAMS', `unknown subscription kind ${String(kind)}`);
    }
    const id = `0x${(this.#next++).toString(16)}`;
    this.sinks.set(id, sink);
    const hook = this.onSubscribe;
    if (hook) setImmediate(() => hook(id, sink));
    return id;
  }
  unsubscribe(id: string): boolean {
    this.ended.push(id);
    return this.sinks.delete(id);
  }
  close(): void {}
}

let node: AnvilNode;
let app: TestApp;
const hub = new FakeHub();

before(async () => {
  node = await startTestAnvil();
  app = await startApp(
    {
      networks: {
        sepolia: { chain_id: 11155111, pools: ['main'] },
        rinkeby: { chain_id: 4, retired_on: '2023-01-30', replacement: 'sepolia' },
        later: { chain_id: 11155111, pools: ['main'], retired_on: '2999-01-01', replacement: 'sepolia' },
        strict: { chain_id: 11155111, pools: ['main'], deny_methods: ['eth_subscribe'] },
      },
      pools: [poolOf('main', [node.url])],
      gateway: {
        max_body_bytes: 4096,
        max_batch: 5,
        websocket: {
          max_connections_per_client: 4,
          max_subscriptions_per_connection: 2,
          max_pending_bytes: 65_536,
          ping_interval: '50ms',
          pong_timeout: '200ms',
        },
      },
    },
    { subscriptions: (_deps: SubscriptionDeps) => hub },
  );
});

after(async () => {
  await app?.close();
  await node?.stop();
});

const wsUrl = (network = 'sepolia', query = ''): string => `${app.rpcUrl(network).replace(/^http/, 'ws')}${query}`;

/** A connected client whose messages queue up for `next()`. */
async function connect(url = wsUrl(), options: WebSocket.ClientOptions = {}) {
  const ws = new WebSocket(url, options);
  const queue: string[] = [];
  const waiters: Array<(text: string) => void> = [];
  ws.on('message', (data) => {
    const text = (data as Buffer).toString();
    const waiter = waiters.shift();
    if (waiter) waiter(text);
    else queue.push(text);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const next = (timeoutMs = 5000): Promise<string> => {
    const queued = queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no message within bound')), timeoutMs);
      waiters.push((text) => {
        clearTimeout(timer);
        resolve(text);
      });
    });
  };
  const ask = (text: string): Promise<string> => {
    ws.send(text);
    return next();
  };
  const close = async (): Promise<void> => {
    ws.close();
    await closed;
  };
  return { ws, next, ask, closed, close };
}

/** The HTTP answer a refused handshake gets. */
function refusal(url: string, options: WebSocket.ClientOptions = {}) {
  return new Promise<{ status: number; body: string; headers: Record<string, unknown> }>((resolve, reject) => {
    const ws = new WebSocket(url, options);
    ws.on('open', () => reject(new Error('handshake accepted')));
    ws.on('error', () => {});
    ws.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), headers: res.headers }),
      );
    });
  });
}

/** Waits (bounded) for a condition the gateway reaches after the client saw the close. */
async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const call = (method: string, params: unknown[] = [], id: unknown = 1): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

describe('handshake', () => {
  // The same X-Request-Id on both: the bodies then match byte for byte, request_id included.
  const asked = { 'x-request-id': 'handshake-1' };

  it('unknown network → 404 with the HTTP JSON body', async () => {
    const refused = await refusal(wsUrl('nope'), { headers: asked });
    assert.equal(refused.status, 404);
    assert.equal(refused.headers['x-request-id'], 'handshake-1');
    const http = await post(app.rpcUrl('nope'), call('eth_chainId', [], null), asked);
    assert.equal(refused.body, http.text);
    assert.equal(JSON.parse(refused.body).error.code, -32001);
  });

  it('retired network → 410 with the same JSON body as HTTP', async () => {
    const refused = await refusal(wsUrl('rinkeby'), { headers: asked });
    assert.equal(refused.status, 410);
    const http = await post(app.rpcUrl('rinkeby'), call('eth_chainId', [], null), asked);
    assert.equal(refused.body, http.text);
    assert.deepEqual(JSON.parse(refused.body).error.data, {
      retired_on: '2023-01-30',
      replacement: 'sepolia',
      request_id: 'handshake-1',
    });
    assert.equal(refused.headers.link, http.headers.link);
  });

  it("a deprecated network's Deprecation/Sunset/Link headers come with the 101", async () => {
    const ws = new WebSocket(wsUrl('later'));
    const opened = new Promise((resolve) => ws.once('open', resolve));
    const res = await new Promise<{ headers: Record<string, unknown> }>((resolve, reject) => {
      ws.once('upgrade', resolve);
      ws.once('error', reject);
    });
    const http = await post(app.rpcUrl('later'), call('eth_chainId'));
    assert.ok(http.headers.sunset);
    for (const name of ['deprecation', 'sunset', 'link']) assert.equal(res.headers[name], http.headers[name], name);
    await opened;
    const closed = new Promise((resolve) => ws.once('close', resolve));
    ws.close();
    await closed;
  });

  it('a path that is not /v1/{network} → 404', async () => {
    const refused = await refusal(`${app.gatewayUrl.replace(/^http/, 'ws')}/v2/sepolia`);
    assert.equal(refused.status, 404);
  });

  it('connections per client over gateway.websocket.max_connections_per_client → 429 / -32005', async () => {
    const open = await Promise.all([connect(), connect(), connect(), connect()]);
    const refused = await refusal(wsUrl());
    assert.equal(refused.status, 429);
    assert.equal(JSON.parse(refused.body).error.code, -32005);
    await Promise.all(open.map((client) => client.close()));
  });

  it('HTTP GET without an upgrade → 405 whose message names Upgrade: websocket', async () => {
    const res = await send(app.rpcUrl(), { method: 'GET' });
    assert.equal(res.status, 405);
    assert.match(res.json<{ error: { message: string } }>().error.message, /Upgrade: websocket/);
  });

  it('an Upgrade to another protocol (h2c) is an ordinary GET → 405', async () => {
    const { port, pathname } = new URL(app.rpcUrl());
    const socket = connectSocket(Number(port), '127.0.0.1');
    socket.write(
      `GET ${pathname} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n`,
    );
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    await until(() => text.includes('\r\n\r\n'), 'an HTTP answer');
    socket.destroy();
    assert.match(text, /^HTTP\/1\.1 405 /);
  });
});

describe('messages', () => {
  it('answers carry the same bytes as HTTP, ids byte for byte (2^64−1)', async () => {
    const client = await connect();
    const body = '{"jsonrpc":"2.0","id":18446744073709551615,"method":"eth_chainId","params":[]}';
    const answer = await client.ask(body);
    assert.equal(answer, (await post(app.rpcUrl(), body)).text);
    assert.ok(answer.includes('"id":18446744073709551615'), answer);
    const stringId = await client.ask('{"jsonrpc":"2.0","id":"a\\u0062","method":"eth_chainId","params":[]}');
    assert.ok(stringId.includes('"id":"a\\u0062"'), stringId);
    await client.close();
  });

  it('a batch is answered as one array, eth_subscribe inside it allowed', async () => {
    const client = await connect();
    const text = await client.ask(
      `[${call('eth_chainId', [], 1)},${call('eth_subscribe', ['newHeads'], 2)},${call('eth_blockNumber', [], 3)}]`,
    );
    const answers = JSON.parse(text) as Array<{ id: number; result?: string }>;
    assert.deepEqual(
      answers.map((a) => a.id),
      [1, 2, 3],
    );
    assert.equal(answers[0]?.result, '0xaa36a7');
    assert.ok(hub.sinks.has(answers[1]?.result as string));
    await client.close();
    await until(() => hub.ended.includes(answers[1]?.result as string), "the connection's subscriptions end with it");
  });

  it('refused methods and bad requests get the HTTP errors; notifications get nothing', async () => {
    const client = await connect();
    assert.equal(JSON.parse(await client.ask(call('admin_peers'))).error.code, -32601);
    assert.equal(JSON.parse(await client.ask('{"jsonrpc":"2.0","id":1,')).error.code, -32700);
    assert.equal(JSON.parse(await client.ask(call('eth_getBlockByNumber', ['0x01', false]))).error.code, -32602);
    client.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'eth_chainId', params: [] }));
    // The notification is not answered: the next message out is the answer to the next call.
    assert.equal(JSON.parse(await client.ask(call('eth_chainId', [], 7))).id, 7);
    await client.close();
  });

  it('a batch over gateway.max_batch → -32005; the connection stays', async () => {
    const client = await connect();
    const batch = `[${Array.from({ length: 6 }, (_, i) => call('eth_chainId', [], i)).join(',')}]`;
    assert.equal(JSON.parse(await client.ask(batch)).error.code, -32005);
    assert.equal(JSON.parse(await client.ask(call('eth_chainId'))).result, '0xaa36a7');
    await client.close();
  });

  it('a message over gateway.max_body_bytes closes the connection with 1009', async () => {
    const client = await connect();
    client.ws.send(call('eth_chainId', ['x'.repeat(5000)]));
    assert.equal((await client.closed).code, 1009);
  });
});

describe('subscriptions', () => {
  it('eth_subscribe → the hub id; over the per-connection limit → -32005; eth_unsubscribe true/false', async () => {
    const client = await connect();
    const a = JSON.parse(await client.ask(call('eth_subscribe', ['newHeads'], 1))).result as string;
    const b = JSON.parse(await client.ask(call('eth_subscribe', ['logs', {}], 2))).result as string;
    const over = JSON.parse(await client.ask(call('eth_subscribe', ['newHeads'], 3)));
    assert.equal(over.error.code, -32005);
    assert.equal(JSON.parse(await client.ask(call('eth_unsubscribe', [a], 5))).result, true);
    assert.equal(JSON.parse(await client.ask(call('eth_subscribe', ['nope'], 4))).error.code, -32602);
    assert.equal(JSON.parse(await client.ask(call('eth_unsubscribe', [a], 6))).result, false);
    assert.equal(JSON.parse(await client.ask(call('eth_unsubscribe', ['0xdeadbeef'], 7))).result, false);
    // The hub's notifications reach the client as they are.
    const note = `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${b}","result":{"number":"0x1"}}}`;
    hub.sinks.get(b)?.send(note);
    assert.equal(await client.next(), note);
    await client.close();
  });

  it('a notification never comes before the answer that carries its subscription id', async () => {
    const client = await connect();
    const note = (id: string) =>
      `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id}","result":"0x1"}}`;
    // The hub pushes at once; the batch's answer waits for its two calls upstream (one origin round trip).
    hub.onSubscribe = (id, sink) => sink.send(note(id));
    try {
      const batch = `[${call('eth_subscribe', ['newHeads'], 1)},${call('eth_chainId', [], 2)},${call('eth_blockNumber', [], 3)}]`;
      const answer = JSON.parse(await client.ask(batch)) as Array<{ result: string }>;
      const id = answer[0]?.result as string;
      assert.equal(await client.next(), note(id));
    } finally {
      hub.onSubscribe = undefined;
    }
    await client.close();
  });

  it("a network's deny_methods still refuses eth_subscribe over WebSocket", async () => {
    const client = await connect(wsUrl('strict'));
    const refused = JSON.parse(await client.ask(call('eth_subscribe', ['newHeads'])));
    assert.equal(refused.error.code, -32601);
    assert.match(refused.error.message, /disabled on network strict/);
    await client.close();
  });

  it('eth_subscribe over HTTP stays refused', async () => {
    const res = await post(app.rpcUrl(), call('eth_subscribe', ['newHeads']));
    assert.equal(res.json<{ error: { code: number } }>().error.code, -32601);
  });

  it('a client that does not read is closed with 1008 "slow consumer"', async () => {
    const client = await connect();
    const id = JSON.parse(await client.ask(call('eth_subscribe', ['newHeads']))).result as string;
    const sink = hub.sinks.get(id) as SubscriptionSink;
    // The client stops reading: the kernel's buffers fill, then the gateway's queue passes 64 KiB.
    (client.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    const big = `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id}","result":"${'a'.repeat(65_536)}"}}`;
    for (let i = 0; i < 2_000 && !hub.ended.includes(id); i += 1) {
      sink.send(big);
      await new Promise((resolve) => setImmediate(resolve));
    }
    (client.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await client.closed;
    assert.deepEqual(closed, { code: 1008, reason: 'slow consumer' });
    await until(() => hub.ended.includes(id), 'the subscription ended with the connection');
  });
});

describe('liveness', () => {
  it('pings come every ping_interval; a client that answers stays', async () => {
    const client = await connect();
    let pings = 0;
    await new Promise<void>((resolve) =>
      client.ws.on('ping', () => {
        pings += 1;
        if (pings === 3) resolve();
      }),
    );
    assert.equal(client.ws.readyState, WebSocket.OPEN);
    await client.close();
  });

  it('no pong within pong_timeout drops the connection', async () => {
    const client = await connect(wsUrl(), { autoPong: false });
    const closed = await client.closed;
    assert.equal(closed.code, 1006);
  });
});

describe('metrics', () => {
  it('counts connections, subscriptions by kind, messages and slow-consumer closes at /metrics', async () => {
    const client = await connect();
    await client.ask(call('eth_subscribe', ['logs', {}]));
    const res = await send(app.apiUrl.replace(/\/client\/v4$/, '/metrics'), { method: 'GET' });
    assert.match(res.text, /switchyard_gateway_ws_connections [1-9]/);
    assert.match(res.text, /switchyard_gateway_ws_subscriptions\{kind="logs"\} 1/);
    assert.match(res.text, /switchyard_gateway_ws_messages_in_total [1-9]/);
    assert.match(res.text, /switchyard_gateway_ws_messages_out_total [1-9]/);
    assert.match(res.text, /switchyard_gateway_ws_slow_consumer_closes_total 1/);
    await client.close();
  });
});

describe('wss, API keys and rate limits', () => {
  const key = 'k'.repeat(24);
  let dir: string;
  let secure: TestApp;
  let ca: Buffer;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-wss-'));
    const cert = makeSelfSignedCert(dir, '/CN=localhost', '127.0.0.1');
    ca = readFileSync(cert.cert);
    secure = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['main'] } },
      pools: [poolOf('main', [node.url])],
      gateway: {
        tls: { cert_file: cert.cert, key_file: cert.key },
        api_keys: [key],
        // A handshake costs one token; the rate is so low nothing refills during the test.
        rate_limit: { requests_per_second: 0.001, burst: 4 },
      },
    });
  });
  after(async () => {
    await secure?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const url = (query = ''): string => `${secure.rpcUrl().replace(/^https/, 'wss')}${query}`;

  it('wss:// when gateway.tls is set; a key as ?key= or header; none or unknown → 401', async () => {
    const missing = await refusal(url(), { ca });
    assert.equal(missing.status, 401);
    assert.equal(JSON.parse(missing.body).error.code, -32003);
    assert.equal((await refusal(url(`?key=${'x'.repeat(24)}`), { ca })).status, 401);
    const byQuery = await connect(url(`?key=${key}`), { ca });
    assert.equal(JSON.parse(await byQuery.ask(call('eth_chainId'))).result, '0xaa36a7');
    await byQuery.close();
    const byHeader = await connect(url(), { ca, headers: { authorization: `Bearer ${key}` } });
    // Tokens so far: two handshakes and one call of the burst of 4; this call is the fourth.
    assert.equal(JSON.parse(await byHeader.ask(call('eth_chainId'))).result, '0xaa36a7');
    // Over the rate limit: a -32005 answer, and the connection stays.
    const limited = JSON.parse(await byHeader.ask(call('eth_chainId', [], 2)));
    assert.deepEqual([limited.id, limited.error.code], [2, -32005]);
    assert.equal(byHeader.ws.readyState, WebSocket.OPEN);
    // A handshake over the rate limit → 429.
    const refused = await refusal(url(`?key=${key}`), { ca });
    assert.equal(refused.status, 429);
    assert.equal(JSON.parse(refused.body).error.code, -32005);
    await byHeader.close();
  });
});

describe('viem', () => {
  it("viem's webSocket transport reads the block number", async () => {
    const viem = createPublicClient({ transport: webSocket(wsUrl()) });
    const expected = BigInt(JSON.parse(await (await post(node.url, call('eth_blockNumber'))).text).result);
    assert.equal(await viem.getBlockNumber({ cacheTime: 0 }), expected);
    const socket = await viem.transport.getRpcClient();
    socket.close();
  });
});

describe('shutdown', () => {
  it('closes every connection with 1001 after the answer in flight', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let arrived: () => void = () => {};
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    const origin = await startHttpServer(async (_req, res, body) => {
      const parsed = JSON.parse(body) as { id: unknown; method: string };
      if (parsed.method === 'eth_getBalance') {
        arrived();
        await held;
      }
      const result = parsed.method === 'eth_chainId' ? '0xaa36a7' : '0x1';
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id: parsed.id, result }));
    });
    const own = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['main'] } },
      pools: [poolOf('main', [origin.url])],
    });
    try {
      const client = await connect(own.rpcUrl().replace(/^http/, 'ws'));
      client.ws.send(call('eth_getBalance', ['0x0000000000000000000000000000000000000000', 'latest'], 9));
      await arrival;
      const closing = own.close();
      release();
      const answer = JSON.parse(await client.next()) as { id: number; result: string };
      assert.deepEqual([answer.id, answer.result], [9, '0x1']);
      assert.equal((await client.closed).code, 1001);
      await closing;
    } finally {
      release();
      await origin.close();
    }
  });
});
