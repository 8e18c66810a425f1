/**
 * Listener-level behaviour: optional API keys (401 / -32003), per-client rate limits (429 + Retry-After,
 * on an injected clock), TLS, CORS preflight, and graceful shutdown (requests in flight finish, new
 * connections are refused). Origins are real node:http servers on free ports.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { ManualClock } from '../../src/clock.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { fromChainTracker, post, type RpcAnswer, startHttpServer, type TestServer } from '../helpers/http.js';

const CALL = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';

async function echoOrigin(): Promise<TestServer> {
  return startHttpServer((_req, res, body) => {
    const { id } = JSON.parse(body) as { id: unknown };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0xaa36a7' }));
  });
}

describe('API keys (gateway.api_keys)', () => {
  let origin: TestServer;
  let app: TestApp;
  const KEY = 'k-0123456789abcdef-test';

  before(async () => {
    origin = await echoOrigin();
    app = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
      pools: [poolOf('p', [origin.url])],
      gateway: { api_keys: [KEY, 'another-key-0123456789'] },
    });
  });
  after(async () => {
    await app?.close();
    await origin?.close();
  });

  it('refuses a call without a key → 401 / -32003', async () => {
    const res = await post(app.rpcUrl(), CALL);
    assert.equal(res.status, 401);
    assert.equal(res.json<RpcAnswer>().error?.code, -32003);
    assert.equal(origin.received.filter((r) => !fromChainTracker(r.body)).length, 0);
  });

  it('refuses an unknown key', async () => {
    const res = await post(app.rpcUrl(), CALL, { authorization: 'Bearer not-a-known-key-000' });
    assert.equal(res.status, 401);
  });

  it('accepts a key as Bearer token or as ?key=', async () => {
    assert.equal((await post(app.rpcUrl(), CALL, { authorization: `Bearer ${KEY}` })).status, 200);
    assert.equal((await post(`${app.rpcUrl()}?key=${KEY}`, CALL)).status, 200);
  });
});

describe('rate limit (gateway.rate_limit)', () => {
  let origin: TestServer;
  let app: TestApp;
  const clock = new ManualClock('2026-01-01T00:00:00Z');

  before(async () => {
    origin = await echoOrigin();
    app = await startApp(
      {
        networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
        pools: [poolOf('p', [origin.url])],
        gateway: { rate_limit: { requests_per_second: 1, burst: 3 } },
      },
      { clock },
    );
  });
  after(async () => {
    await app?.close();
    await origin?.close();
  });

  it('answers 429 / -32005 with Retry-After once the bucket is empty, and recovers with time', async () => {
    for (let i = 0; i < 3; i += 1) assert.equal((await post(app.rpcUrl(), CALL)).status, 200);
    const limited = await post(app.rpcUrl(), CALL);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers['retry-after'], '1');
    assert.equal(limited.json<RpcAnswer>().error?.code, -32005);
    clock.advance(1000);
    assert.equal((await post(app.rpcUrl(), CALL)).status, 200);
  });

  it('counts each call of a batch', async () => {
    clock.advance(10_000);
    const batch = `[${CALL},${CALL}]`;
    assert.equal((await post(app.rpcUrl(), batch)).status, 200);
    const res = await post(app.rpcUrl(), batch);
    assert.equal(res.status, 429);
    assert.equal(res.json<RpcAnswer>().error?.code, -32005);
  });
});

describe('TLS, CORS and graceful shutdown', () => {
  let origin: TestServer;
  let release: (() => void) | undefined;
  let app: TestApp;

  before(async () => {
    origin = await startHttpServer(async (_req, res, body) => {
      const { id, method } = JSON.parse(body) as { id: unknown; method: string };
      if (method === 'eth_slow') await new Promise<void>((resolve) => (release = resolve));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: method }));
    });
    app = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['p'], allow_methods: ['eth_slow'] } },
      pools: [poolOf('p', [origin.url])],
      gateway: {
        tls: {
          cert_file: join(REPO_ROOT, 'test/gateway/fixtures/tls-cert.pem'),
          key_file: join(REPO_ROOT, 'test/gateway/fixtures/tls-key.pem'),
        },
      },
    });
  });
  after(async () => {
    await app?.close();
    await origin?.close();
  });

  const tls = new Agent({ connect: { ca: readFileSync(join(REPO_ROOT, 'test/gateway/fixtures/tls-cert.pem')) } });
  const rpc = async (method: string) => {
    const res = await request(app.rpcUrl(), {
      method: 'POST',
      dispatcher: tls,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }),
    });
    return { status: res.statusCode, answer: (await res.body.json()) as RpcAnswer };
  };

  it('serves HTTPS when gateway.tls is set', async () => {
    assert.match(app.gatewayUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    const { status, answer } = await rpc('eth_chainId');
    assert.equal(status, 200);
    assert.equal(answer.result, 'eth_chainId');
  });

  it('answers CORS preflights', async () => {
    const res = await request(app.rpcUrl(), {
      method: 'OPTIONS',
      dispatcher: tls,
      headers: { origin: 'https://dapp.example', 'access-control-request-method': 'POST' },
    });
    await res.body.dump();
    assert.equal(res.statusCode, 204);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.match(String(res.headers['access-control-allow-headers']), /content-type/);
  });

  it('on close, finishes the request in flight and refuses new connections', async () => {
    const slow = rpc('eth_slow');
    while (release === undefined) await new Promise((resolve) => setImmediate(resolve));
    const closing = app.close();
    const fresh = new Agent({ connect: { ca: readFileSync(join(REPO_ROOT, 'test/gateway/fixtures/tls-cert.pem')) } });
    await assert.rejects(
      request(app.rpcUrl(), {
        method: 'POST',
        dispatcher: fresh,
        headers: { 'content-type': 'application/json' },
        body: CALL,
      }),
      (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED' || err.code === 'ECONNRESET',
    );
    await fresh.close();
    release();
    const { status, answer } = await slow;
    assert.equal(status, 200);
    assert.equal(answer.result, 'eth_slow');
    await closing;
  });
});

describe('a client that goes away', () => {
  let origin: TestServer;
  let app: TestApp;

  before(async () => {
    origin = await startHttpServer((_req, res, body) => {
      const { id, method } = JSON.parse(body) as { id: unknown; method: string };
      if (method === 'eth_slow') return; // never answers
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: method }));
    });
    app = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['p'], allow_methods: ['eth_slow'] } },
      pools: [poolOf('p', [origin.url])],
    });
  });
  after(async () => {
    await app?.close();
    await origin?.close();
  });

  it('does not count against the origin (it stays in rotation)', async () => {
    const abort = new AbortController();
    const pending = request(app.rpcUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_slow"}',
      signal: abort.signal,
    });
    while (!origin.received.some((r) => r.body.includes('eth_slow'))) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    abort.abort();
    await assert.rejects(pending);
    for (let i = 0; i < 3; i += 1) {
      const res = await post(app.rpcUrl(), CALL);
      assert.equal(res.status, 200, res.text);
    }
  });
});
