/**
 * Forwarding under failure, with real servers on free ports: origins that refuse connections, answer
 * 5xx, garbled, empty or wrongly-numbered bodies, or never answer (undici balanced-pool style: a table of
 * which origin misbehaves how, and what the client must see). Then two real anvil origins, one killed
 * in the middle of a run of reads: the client sees no error.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { scanJson } from '../../src/gateway/rpc/json-scan.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { fromChainTracker, post, type RpcAnswer, startHttpServer, type TestServer } from '../helpers/http.js';

type Behaviour = 'ok' | 'status500' | 'status429' | 'garbled' | 'empty' | 'wrongId' | 'hang';

/** A real HTTP origin that behaves as told; a well-behaved one answers `"<name>"` as the result. */
function origin(name: string, behaviour: Behaviour): Promise<TestServer> {
  return startHttpServer((_req: http.IncomingMessage, res: http.ServerResponse, body: string) => {
    const id = (JSON.parse(body) as { id?: unknown }).id;
    const json = (text: string, status = 200): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(text);
    };
    switch (behaviour) {
      case 'ok':
        return json(JSON.stringify({ jsonrpc: '2.0', id, result: name }));
      case 'status500':
        return json('{"error":"internal"}', 500);
      case 'status429':
        return json(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32005, message: 'slow down' } }), 429);
      case 'garbled':
        return json(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":"trunc`);
      case 'empty':
        return json('');
      case 'wrongId':
        return json(JSON.stringify({ jsonrpc: '2.0', id: 987654321, result: name }));
      case 'hang':
        return; // never answers
    }
  });
}

/** The address of a port nothing listens on (connection refused). */
async function refusedAddress(): Promise<string> {
  const server = await origin('gone', 'ok');
  await server.close();
  return server.url;
}

/** 2^64−1: beyond 2^53, so a JS number round-trip would change it. */
const BIG_ID = '18446744073709551615';
const BIG_ID_CALL = `{"jsonrpc":"2.0","id":${BIG_ID},"method":"eth_chainId","params":[]}`;

/** The raw bytes of a response's top-level id. */
function rawId(text: string): string {
  const buf = Buffer.from(text);
  const id = scanJson(buf)?.members.find((m) => m.key === 'id');
  assert.ok(id, `no id in ${text}`);
  return buf.subarray(id.value.start, id.value.end).toString();
}

const FAILING: Behaviour[] = ['status500', 'status429', 'garbled', 'empty', 'wrongId'];

describe('failover with misbehaving origins', () => {
  const servers: TestServer[] = [];
  let good: TestServer;
  let never: TestServer;
  let app: TestApp;
  let refused: string;

  before(async () => {
    good = await origin('good', 'ok');
    servers.push(good);
    refused = await refusedAddress();
    const networks: Record<string, unknown> = {};
    const pools: unknown[] = [poolOf('good', [good.url])];
    const bad = async (name: string, behaviour: Behaviour | 'refused'): Promise<string> => {
      if (behaviour === 'refused') return refused;
      const server = await origin(name, behaviour);
      servers.push(server);
      return server.url;
    };
    // Reads and writes use separate pools: a failed read may take its origin out of rotation.
    for (const behaviour of [...FAILING, 'refused'] as const) {
      for (const kind of ['read', 'write']) {
        pools.push(poolOf(`${kind}-${behaviour}`, [await bad(behaviour, behaviour)]));
        networks[`${kind}-${behaviour.toLowerCase()}`] = { chain_id: 1, pools: [`${kind}-${behaviour}`, 'good'] };
      }
    }
    pools.push(poolOf('all-bad', [refused, await bad('x500', 'status500'), await bad('xgarbled', 'garbled')]));
    never = await origin('never', 'ok');
    servers.push(never);
    pools.push({
      name: 'zero-weight',
      origins: [
        { name: 'good', address: good.url },
        { name: 'never', address: never.url, weight: 0 },
      ],
    });
    networks['net-all-bad'] = { chain_id: 1, pools: ['all-bad'] };
    networks['net-good'] = { chain_id: 1, pools: ['good'] };
    networks['net-disabled'] = { chain_id: 1, pools: ['disabled'] };
    pools.push({ name: 'disabled', origins: [{ name: 'off', address: good.url, enabled: false }] });
    networks['net-weights'] = { chain_id: 1, pools: ['zero-weight'] };
    // A generous timeout: a spurious timeout on a loaded machine would take the good origin out of rotation.
    app = await startApp({ networks, pools, gateway: { request_timeout: '10s' } });
  });

  after(async () => {
    await app?.close();
    await Promise.all(servers.map((server) => server.close()));
  });

  const call = (network: string, method = 'eth_blockNumber', id: unknown = 7) =>
    post(app.rpcUrl(network), JSON.stringify({ jsonrpc: '2.0', id, method, params: [] }));
  const sentTo = (server: TestServer, method: string) =>
    server.received.filter((r) => (JSON.parse(r.body) as { method: string }).method === method).length;

  for (const behaviour of [...FAILING, 'refused']) {
    it(`a read that meets "${behaviour}" is retried on the next origin`, async () => {
      const res = await call(`read-${behaviour.toLowerCase()}`, 'eth_blockNumber', 'r1');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json(), { jsonrpc: '2.0', id: 'r1', result: 'good' });
    });
  }

  for (const behaviour of FAILING) {
    it(`a write that meets "${behaviour}" is not resent (it may have reached the origin)`, async () => {
      const before = sentTo(good, 'eth_sendRawTransaction');
      const res = await call(`write-${behaviour.toLowerCase()}`, 'eth_sendRawTransaction', 'w1');
      assert.equal(res.status, 502, res.text);
      const answer = res.json<RpcAnswer>();
      assert.equal(answer.id, 'w1');
      assert.equal(answer.error?.code, -32002);
      assert.equal(sentTo(good, 'eth_sendRawTransaction'), before);
    });
  }

  it('a write whose connection was refused is sent to the next origin', async () => {
    const before = sentTo(good, 'eth_sendRawTransaction');
    const res = await call('write-refused', 'eth_sendRawTransaction', 'w2');
    assert.equal(res.status, 200, res.text);
    assert.equal(sentTo(good, 'eth_sendRawTransaction'), before + 1);
  });

  it('all origins failed → 502 / -32002, data lists the attempts by name, the id comes back as sent', async () => {
    const res = await post(app.rpcUrl('net-all-bad'), BIG_ID_CALL);
    assert.equal(res.status, 502, res.text);
    assert.equal(rawId(res.text), BIG_ID);
    const answer = res.json<RpcAnswer>();
    assert.equal(answer.error?.code, -32002);
    const data = answer.error?.data as { attempts: Array<{ pool: string; origin: string }> } | undefined;
    const attempts = data?.attempts ?? [];
    assert.equal(attempts.length, 3);
    assert.ok(!res.text.includes('127.0.0.1'), 'origin addresses never reach the client');
  });

  it('only disabled origins → 503 / -32002', async () => {
    const res = await call('net-disabled');
    assert.equal(res.status, 503, res.text);
    assert.equal(res.json<RpcAnswer>().error?.code, -32002);
  });

  it('an origin with weight 0 is never chosen', async () => {
    for (let i = 0; i < 20; i += 1) assert.equal((await call('net-weights')).status, 200);
    assert.equal(never.received.length, 0);
  });

  it('invalid params are refused before any upstream call', async () => {
    // The chain tracker polls every origin on its own: count the calls the gateway forwarded.
    const forwarded = () => good.received.filter((r) => !fromChainTracker(r.body)).length;
    const before = forwarded();
    const res = await post(
      app.rpcUrl('net-good'),
      '{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x01",false]}',
    );
    assert.equal(res.json<RpcAnswer>().error?.code, -32602);
    assert.equal(forwarded(), before);
  });

  it('a batch fails over element by element', async () => {
    const body = `[${[1, 2, 3].map((id) => `{"jsonrpc":"2.0","id":${id},"method":"eth_chainId"}`).join(',')}]`;
    const res = await post(app.rpcUrl('read-status500'), body);
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.json<RpcAnswer[]>().map((a) => [a.id, a.result]),
      [
        [1, 'good'],
        [2, 'good'],
        [3, 'good'],
      ],
    );
  });
});

describe('origins that never answer (gateway.request_timeout)', () => {
  const servers: TestServer[] = [];
  let good: TestServer;
  let app: TestApp;

  before(async () => {
    good = await origin('good', 'ok');
    const hangs = await Promise.all([1, 2, 3, 4].map((i) => origin(`hang${i}`, 'hang')));
    servers.push(good, ...hangs);
    const [h1, h2, h3, h4] = hangs.map((server) => server.url) as [string, string, string, string];
    app = await startApp({
      networks: {
        'read-hang': { chain_id: 1, pools: ['read-hang', 'good'] },
        'write-hang': { chain_id: 1, pools: ['write-hang', 'good'] },
        'all-hang': { chain_id: 1, pools: ['all-hang'] },
      },
      pools: [
        poolOf('good', [good.url]),
        poolOf('read-hang', [h1]),
        poolOf('write-hang', [h2]),
        poolOf('all-hang', [h3, h4]),
      ],
      gateway: { request_timeout: '1s' },
    });
  });

  after(async () => {
    await app?.close();
    await Promise.all(servers.map((server) => server.close()));
  });

  const call = (network: string, method: string, id: unknown) =>
    post(app.rpcUrl(network), JSON.stringify({ jsonrpc: '2.0', id, method, params: [] }));

  it('a read that times out is retried on the next origin', async () => {
    const res = await call('read-hang', 'eth_blockNumber', 'r1');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json(), { jsonrpc: '2.0', id: 'r1', result: 'good' });
  });

  it('a write that times out is not resent → 504', async () => {
    const res = await call('write-hang', 'eth_sendRawTransaction', 'w1');
    assert.equal(res.status, 504, res.text);
    assert.equal(res.json<RpcAnswer>().error?.code, -32002);
    assert.equal(good.received.filter((r) => r.body.includes('eth_sendRawTransaction')).length, 0);
  });

  it('all origins timed out → 504 / -32002, the id comes back as sent', async () => {
    const res = await post(app.rpcUrl('all-hang'), BIG_ID_CALL);
    assert.equal(res.status, 504, res.text);
    assert.equal(rawId(res.text), BIG_ID);
    assert.equal(res.json<RpcAnswer>().error?.code, -32002);
  });
});

describe('an anvil origin killed mid-run', () => {
  let a: AnvilNode;
  let b: AnvilNode;
  let app: TestApp;

  before(async () => {
    [a, b] = await Promise.all([startTestAnvil(), startTestAnvil()]);
    app = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['devnet'] } },
      pools: [poolOf('devnet', [a.url, b.url])],
    });
  });

  after(async () => {
    await app?.close();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('filter calls go back to the origin that created the filter', async () => {
    const rpc = async (method: string, params: unknown[]) =>
      (await post(app.rpcUrl(), JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }))).json<RpcAnswer>();
    for (let i = 0; i < 12; i += 1) {
      const created = await rpc(
        i % 2 === 0 ? 'eth_newBlockFilter' : 'eth_newFilter',
        i % 2 === 0 ? [] : [{ fromBlock: 'latest' }],
      );
      const id = created.result as string;
      assert.equal(typeof id, 'string', JSON.stringify(created));
      for (let k = 0; k < 3; k += 1) {
        const changes = await rpc('eth_getFilterChanges', [id]);
        assert.equal(changes.error, undefined, `filter ${id}: ${JSON.stringify(changes.error)}`);
      }
      assert.equal((await rpc('eth_uninstallFilter', [id])).result, true);
    }
  });

  it('reads keep succeeding through the other origin; the client sees no error', async () => {
    const total = 240;
    const killAfter = 60;
    let done = 0;
    const failures: string[] = [];
    const hashes = new Set<string>();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < total) {
        next += 1;
        const res = await post(
          app.rpcUrl(),
          '{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x0",false]}',
        );
        const answer = res.json<RpcAnswer>();
        if (res.status !== 200 || answer.error) failures.push(`${res.status} ${res.text}`);
        else hashes.add((answer.result as { hash: string }).hash);
        done += 1;
        if (done === killAfter) process.kill(a.pid, 'SIGKILL');
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    await a.exited;
    assert.deepEqual(failures, []);
    assert.equal(done, total);
    assert.equal(hashes.size, 1, 'both nodes share one genesis block');
  });
});
