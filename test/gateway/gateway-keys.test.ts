/**
 * Gateway keys on the gateway (SPEC §11) with a real node:http origin: a key opens the gateway (Bearer
 * or ?key=), an unknown key is 401 even when keys are optional, a key outside its networks is 403, a
 * key's rate_limit is its own bucket (429 + Retry-After) and its daily_quota is 429 / -32005 until
 * 00:00 UTC (on an injected ManualClock), usage is counted per day and network (errors = JSON-RPC error
 * answers; 401/403/429 refusals not counted), a key disabled, rolled or deleted through the API is
 * refused by the very next request, `gateway.require_key`, and the WebSocket handshake and open
 * connections follow the same keys. No key value ever reaches the log. Runs on both store backends.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { ManualClock } from '../../src/clock.js';
import { createLogger } from '../../src/log.js';
import { type ApiFixture, startApiFixture } from '../api/setup.js';
import { poolOf, startApp } from '../helpers/app.js';
import { fromChainTracker, post, type RpcAnswer, startHttpServer, type TestServer } from '../helpers/http.js';

const CALL = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
const REVERTING =
  '{"jsonrpc":"2.0","id":2,"method":"eth_call","params":[{"to":"0x0000000000000000000000000000000000000001","data":"0x"},"latest"]}';
const UNKNOWN_METHOD = '{"jsonrpc":"2.0","id":3,"method":"eth_noSuchMethod","params":[]}';

interface Key {
  id: string;
  value: string;
}

/** Answers eth_call with a revert error, everything else with a result. */
async function origin(): Promise<TestServer> {
  return startHttpServer((_req, res, body) => {
    const parsed = JSON.parse(body) as { id: unknown; method: string } | Array<{ id: unknown; method: string }>;
    const answer = (call: { id: unknown; method: string }) =>
      call.method === 'eth_call'
        ? { jsonrpc: '2.0', id: call.id, error: { code: 3, message: 'execution reverted' } }
        : { jsonrpc: '2.0', id: call.id, result: '0xaa36a7' };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)));
  });
}

function batch(n: number): string {
  return JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_chainId' })));
}

/** Waits for `check` to hold, polling every 20 ms, at most `ms`. */
async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('gateway keys on the gateway', () => {
  let server: TestServer;
  let f: ApiFixture;
  const lines: string[] = [];
  const clock = new ManualClock('2026-05-10T23:00:00Z');
  const values: string[] = [];
  const ids: string[] = [];
  let keys: string;

  const create = async (body: Record<string, unknown> = {}): Promise<Key> => {
    const res = await f.call('POST', keys, { body });
    assert.equal(res.status, 200);
    const key = res.body.result as Key;
    values.push(key.value);
    ids.push(key.id);
    return key;
  };
  const bearer = (value: string) => ({ authorization: `Bearer ${value}` });

  before(async () => {
    server = await origin();
    f = await startApiFixture(
      {
        networks: {
          sepolia: { chain_id: 11155111, pools: ['p'] },
          holesky: { chain_id: 17000, pools: ['p'] },
        },
        pools: [poolOf('p', [server.url])],
      },
      { clock, logger: createLogger({ level: 'debug', write: (line) => lines.push(line) }) },
    );
    keys = `/accounts/${f.accountId}/gateway/keys`;
  });
  after(async () => {
    await f?.close();
    await server?.close();
    // Keys never reach the log (values, or a prefix long enough to use).
    const log = lines.join('');
    for (const value of values) assert.ok(!log.includes(value.slice(0, 12)), 'a key value was logged');
  });

  it('a key opens the gateway as Bearer or ?key=; no key stays anonymous (require_key false)', async () => {
    const key = await create();
    assert.equal((await post(f.app.rpcUrl('sepolia'), CALL, bearer(key.value))).status, 200);
    assert.equal((await post(`${f.app.rpcUrl('sepolia')}?key=${key.value}`, CALL)).status, 200);
    assert.equal((await post(f.app.rpcUrl('sepolia'), CALL)).status, 200);
  });

  it('an unknown key is 401 / -32003 even though keys are optional', async () => {
    const before = server.received.filter((r) => !fromChainTracker(r.body)).length;
    const res = await post(f.app.rpcUrl('sepolia'), CALL, bearer(`swk_${'x'.repeat(40)}`));
    assert.equal(res.status, 401);
    assert.deepEqual(res.json<RpcAnswer>().error?.code, -32003);
    assert.equal(server.received.filter((r) => !fromChainTracker(r.body)).length, before);
  });

  it('a key on a network outside its networks is 403 / -32003', async () => {
    const key = await create({ networks: ['sepolia'] });
    assert.equal((await post(f.app.rpcUrl('sepolia'), CALL, bearer(key.value))).status, 200);
    const res = await post(f.app.rpcUrl('holesky'), CALL, bearer(key.value));
    assert.equal(res.status, 403);
    const error = res.json<RpcAnswer>().error;
    assert.equal(error?.code, -32003);
    assert.match(error?.message ?? '', /holesky/);
  });

  it("a key's rate_limit is its own bucket: 429 / -32005 with Retry-After, other clients unaffected", async () => {
    const key = await create({ rate_limit: { requests_per_second: 1, burst: 2 } });
    const other = await create({ rate_limit: { requests_per_second: 1, burst: 2 } });
    assert.equal((await post(f.app.rpcUrl('sepolia'), CALL, bearer(key.value))).status, 200);
    assert.equal((await post(f.app.rpcUrl('sepolia'), CALL, bearer(key.value))).status, 200);
    const limited = await post(f.app.rpcUrl('sepolia'), CALL, bearer(key.value));
    assert.equal(limited.status, 429);
    assert.equal(limited.json<RpcAnswer>().error?.code, -32005);
    assert.equal(limited.headers['retry-after'], '1');
    assert.equal((await post(f.app.rpcUrl('sepolia'), batch(2), bearer(other.value))).status, 200);
    assert.equal((await post(f.app.rpcUrl('sepolia'), CALL)).status, 200);
    clock.advance(1000);
    assert.equal((await post(f.app.rpcUrl('sepolia'), CALL, bearer(key.value))).status, 200);
  });

  it('daily_quota: each call of a batch counts; over it 429 / -32005 until 00:00 UTC, then open again', async () => {
    clock.set('2026-05-10T23:00:00Z');
    const key = await create({ daily_quota: 3 });
    assert.equal((await post(f.app.rpcUrl('sepolia'), batch(2), bearer(key.value))).status, 200);
    // A batch that does not fit is refused whole.
    const whole = await post(f.app.rpcUrl('sepolia'), batch(2), bearer(key.value));
    assert.equal(whole.status, 429);
    assert.equal(whole.json<RpcAnswer>().error?.code, -32005);
    assert.equal((await post(f.app.rpcUrl('holesky'), CALL, bearer(key.value))).status, 200);
    const over = await post(f.app.rpcUrl('sepolia'), CALL, bearer(key.value));
    assert.equal(over.status, 429);
    assert.equal(over.json<RpcAnswer>().error?.code, -32005);
    assert.equal(over.headers['retry-after'], '3600');
    clock.set('2026-05-10T23:59:59Z');
    assert.equal((await post(f.app.rpcUrl('sepolia'), CALL, bearer(key.value))).headers['retry-after'], '1');
    clock.set('2026-05-11T00:00:00Z');
    assert.equal((await post(f.app.rpcUrl('sepolia'), CALL, bearer(key.value))).status, 200);
  });

  it('usage per day and network: requests and errors; 404/429 refusals are not counted', async () => {
    clock.set('2026-05-12T10:00:00Z');
    const key = await create({ networks: ['sepolia', 'holesky'], daily_quota: 8 });
    const url = f.app.rpcUrl('sepolia');
    assert.equal((await post(url, CALL, bearer(key.value))).status, 200);
    // An origin's error answer and a gateway-made error both count as errors.
    assert.equal((await post(url, REVERTING, bearer(key.value))).json<RpcAnswer>().error?.code, 3);
    assert.equal((await post(url, UNKNOWN_METHOD, bearer(key.value))).json<RpcAnswer>().error?.code, -32601);
    // A batch: 3 calls, one of them an error.
    const mixed = `[${CALL},${REVERTING.replace('"id":2', '"id":5')},${CALL.replace('"id":1', '"id":6')}]`;
    assert.equal((await post(url, mixed, bearer(key.value))).status, 200);
    assert.equal((await post(f.app.rpcUrl('holesky'), CALL, bearer(key.value))).status, 200);
    clock.set('2026-05-13T10:00:00Z');
    assert.equal((await post(f.app.rpcUrl('holesky'), CALL, bearer(key.value))).status, 200);
    // Fill the 13th's quota (1 + 7 = 8); then a quota refusal and an unknown network (404, before the
    // key is looked at) are not requests.
    assert.equal((await post(f.app.rpcUrl('holesky'), batch(7), bearer(key.value))).status, 200);
    assert.equal((await post(f.app.rpcUrl('holesky'), CALL, bearer(key.value))).status, 429);
    assert.equal((await post(f.app.rpcUrl('mainnet'), CALL, bearer(key.value))).status, 404);
    const expected = [
      { date: '2026-05-12', network: 'holesky', requests: 1, errors: 0 },
      { date: '2026-05-12', network: 'sepolia', requests: 6, errors: 3 },
      { date: '2026-05-13', network: 'holesky', requests: 8, errors: 0 },
    ];
    const usage = async () => (await f.call('GET', `${keys}/${key.id}/usage`)).body.result;
    await until(async () => JSON.stringify(await usage()) === JSON.stringify(expected), 5000, 'usage flushed');
    const info = (await f.call('GET', `${keys}/${key.id}`)).body.result as { last_used_on: string | null };
    assert.equal(info.last_used_on?.slice(0, 10), '2026-05-13');
  });

  it('a key disabled, rolled or deleted through the API is refused by the next request', async () => {
    clock.set('2026-05-14T10:00:00Z');
    const key = await create();
    const url = f.app.rpcUrl('sepolia');
    assert.equal((await f.call('PATCH', `${keys}/${key.id}`, { body: { enabled: false } })).status, 200);
    assert.equal((await post(url, CALL, bearer(key.value))).status, 401);
    assert.equal((await f.call('PATCH', `${keys}/${key.id}`, { body: { enabled: true } })).status, 200);
    assert.equal((await post(url, CALL, bearer(key.value))).status, 200);
    const rolled = (await f.call('PUT', `${keys}/${key.id}/value`)).body.result as string;
    values.push(rolled);
    assert.equal((await post(url, CALL, bearer(key.value))).status, 401);
    assert.equal((await post(url, CALL, bearer(rolled))).status, 200);
    assert.equal((await f.call('DELETE', `${keys}/${key.id}`)).status, 200);
    const res = await post(url, CALL, bearer(rolled));
    assert.equal(res.status, 401);
    assert.equal(res.json<RpcAnswer>().error?.code, -32003);
  });

  it('WebSocket: the handshake checks the key (401, 403); a key revoked or narrowed closes its connections with 4001', async () => {
    const key = await create({ networks: ['sepolia'] });
    const wsUrl = (network: string, query = '') => `${f.app.rpcUrl(network).replace(/^http/, 'ws')}${query}`;
    const refusedStatus = (url: string) =>
      new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(url);
        ws.on('unexpected-response', (_req, res) => {
          resolve(res.statusCode ?? 0);
          res.resume();
          ws.terminate();
        });
        ws.on('open', () => reject(new Error('the handshake was accepted')));
        ws.on('error', () => {});
      });
    assert.equal(await refusedStatus(wsUrl('sepolia', `?key=swk_${'y'.repeat(40)}`)), 401);
    assert.equal(await refusedStatus(wsUrl('holesky', `?key=${key.value}`)), 403);
    const ws = new WebSocket(wsUrl('sepolia'), { headers: bearer(key.value) });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const answer = new Promise<string>((resolve) => ws.once('message', (data) => resolve(String(data))));
    ws.send(CALL);
    assert.equal((JSON.parse(await answer) as RpcAnswer).result, '0xaa36a7');
    const closing = (socket: WebSocket) =>
      new Promise<[number, string]>((resolve) =>
        socket.once('close', (code, reason) => resolve([code, reason.toString()])),
      );
    const opened = async (url: string): Promise<WebSocket> => {
      const socket = new WebSocket(url);
      await new Promise((resolve, reject) => {
        socket.once('open', resolve);
        socket.once('error', reject);
      });
      return socket;
    };
    const closed = closing(ws);
    assert.equal((await f.call('DELETE', `${keys}/${key.id}`)).status, 200);
    assert.deepEqual(await closed, [4001, 'gateway key revoked']);

    // A key whose networks no longer include the connection's network: closed too (4001, saying so).
    const wide = await create();
    const second = await opened(wsUrl('sepolia', `?key=${wide.value}`));
    const narrowed = closing(second);
    assert.equal((await f.call('PATCH', `${keys}/${wide.id}`, { body: { networks: ['holesky'] } })).status, 200);
    assert.deepEqual(await narrowed, [4001, 'gateway key no longer allows network sepolia']);

    // Disabled, and rolled: 4001 each, with its reason.
    const third = await opened(wsUrl('holesky', `?key=${wide.value}`));
    const disabled = closing(third);
    assert.equal((await f.call('PATCH', `${keys}/${wide.id}`, { body: { enabled: false } })).status, 200);
    assert.deepEqual(await disabled, [4001, 'gateway key revoked']);
    assert.equal((await f.call('PATCH', `${keys}/${wide.id}`, { body: { enabled: true } })).status, 200);
    const fourth = await opened(wsUrl('holesky', `?key=${wide.value}`));
    const rolled = closing(fourth);
    const value = (await f.call('PUT', `${keys}/${wide.id}/value`)).body.result as string;
    values.push(value);
    assert.deepEqual(await rolled, [4001, 'gateway key rolled: reconnect with the new value']);
  });

  it('metrics count the keys and never carry a key value or id', async () => {
    const text = await (await fetch(`${f.app.apiUrl.replace(/\/client\/v4$/, '')}/metrics`)).text();
    assert.match(text, /^switchyard_gateway_keys \d+$/m);
    assert.match(text, /^switchyard_gateway_key_reloads_total \d+$/m);
    for (const secret of [...values, ...ids]) assert.ok(!text.includes(secret));
  });
});

describe('gateway.require_key', () => {
  let server: TestServer;
  let f: ApiFixture;

  before(async () => {
    server = await origin();
    f = await startApiFixture({
      networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
      pools: [poolOf('p', [server.url])],
      gateway: { require_key: true },
    });
  });
  after(async () => {
    await f?.close();
    await server?.close();
  });

  it('a call without a key is 401 / -32003; with a gateway key it passes', async () => {
    const res = await post(f.app.rpcUrl('sepolia'), CALL);
    assert.equal(res.status, 401);
    assert.equal(res.json<RpcAnswer>().error?.code, -32003);
    const key = (await f.call('POST', `/accounts/${f.accountId}/gateway/keys`, { body: {} })).body.result as Key;
    assert.equal((await post(f.app.rpcUrl('sepolia'), CALL, { authorization: `Bearer ${key.value}` })).status, 200);
  });
});

describe('a key revoked in another process sharing the store', () => {
  let server: TestServer;
  let f: ApiFixture;
  let second: Awaited<ReturnType<typeof startApp>>;

  before(async () => {
    server = await origin();
    const raw = {
      networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
      pools: [poolOf('p', [server.url])],
    };
    f = await startApiFixture(raw);
    // The same store: the first app's SQLite file, or its PostgreSQL database; and the same secrets key.
    second = await startApp({
      ...raw,
      secrets_key_file: join(f.app.config.data_dir, 'secrets.key'),
      ...(f.app.config.database_url === undefined
        ? { data_dir: f.app.config.data_dir }
        : { database_url: f.app.config.database_url }),
    });
  });
  after(async () => {
    await second?.close();
    await f?.close();
    await server?.close();
  });

  it('is refused by the other process within 1 s', async () => {
    const key = (await f.call('POST', `/accounts/${f.accountId}/gateway/keys`, { body: {} })).body.result as Key;
    const auth = { authorization: `Bearer ${key.value}` };
    await until(
      async () => (await post(second.rpcUrl('sepolia'), CALL, auth)).status === 200,
      2000,
      'the new key is known to the other process',
    );
    assert.equal((await f.call('DELETE', `/accounts/${f.accountId}/gateway/keys/${key.id}`)).status, 200);
    const revoked = Date.now();
    await until(
      async () => (await post(second.rpcUrl('sepolia'), CALL, auth)).status === 401,
      1000,
      'the other process refuses the deleted key',
    );
    assert.ok(Date.now() - revoked < 1000);
  });
});
