/**
 * The order of gateway refusals (SPEC §15): an unknown network is 404 NETWORK_UNKNOWN and a retired one
 * 410 NETWORK_RETIRED (with its successor) before any key check — for a key scoped to other networks, a
 * bad key and no key alike (`require_key: true`) — and a key's network scope (403) applies only to a
 * network that exists and is served. Over HTTP (the 404/410 keep the request's id) and the WebSocket
 * handshake. A real node:http origin answers what gets through; on both store backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { type ApiFixture, startApiFixture } from '../api/setup.js';
import { poolOf } from '../helpers/app.js';
import { post, type RpcAnswer, startHttpServer, type TestServer } from '../helpers/http.js';

const CALL = '{"jsonrpc":"2.0","id":"order-7","method":"eth_chainId","params":[]}';
const BAD_KEY = `swk_${'z'.repeat(40)}`;

describe('gateway refusals: 404 and 410 before any key check', () => {
  let server: TestServer;
  let f: ApiFixture;
  let scoped = '';

  before(async () => {
    server = await startHttpServer((_req, res, body) => {
      const { id } = JSON.parse(body) as { id: unknown };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0xaa36a7' }));
    });
    f = await startApiFixture({
      gateway: { require_key: true },
      networks: {
        sepolia: { chain_id: 11155111, pools: ['p'] },
        holesky: { chain_id: 17000, pools: ['p'] },
        goerli: { chain_id: 5, pools: ['p'], retired_on: '2024-04-01', replacement: 'sepolia' },
      },
      pools: [poolOf('p', [server.url])],
    });
    const created = await f.call('POST', `/accounts/${f.accountId}/gateway/keys`, { body: { networks: ['holesky'] } });
    assert.equal(created.status, 200);
    scoped = (created.body.result as { value: string }).value;
  });
  after(async () => {
    await f?.close();
    await server?.close();
  });

  const callers = () => ({
    'a key scoped to holesky': { authorization: `Bearer ${scoped}` },
    'an unknown key': { authorization: `Bearer ${BAD_KEY}` },
    'no key': {},
  });

  it('HTTP: unknown 404, retired 410 with its successor, whoever asks; 403 only for a served network outside the scope', async () => {
    for (const [who, headers] of Object.entries(callers())) {
      const unknown = await post(f.app.rpcUrl('mainnet'), CALL, headers);
      assert.equal(unknown.status, 404, who);
      assert.equal(unknown.json<RpcAnswer>().error?.code, -32001, who);
      assert.match(unknown.text, /"id":"order-7"/, `${who}: the 404 keeps the request's id`);
      const retired = await post(f.app.rpcUrl('goerli'), CALL, headers);
      assert.equal(retired.status, 410, who);
      const error = retired.json<RpcAnswer>().error;
      const request_id = retired.headers['x-request-id'];
      assert.deepEqual(error?.data, { retired_on: '2024-04-01', replacement: 'sepolia', request_id }, who);
      assert.equal(retired.headers.link, '</v1/sepolia>; rel="successor-version"', who);
    }
    const outside = await post(f.app.rpcUrl('sepolia'), CALL, callers()['a key scoped to holesky']);
    assert.equal(outside.status, 403);
    assert.equal(outside.json<RpcAnswer>().error?.code, -32003);
    assert.equal((await post(f.app.rpcUrl('sepolia'), CALL, { authorization: `Bearer ${BAD_KEY}` })).status, 401);
    assert.equal((await post(f.app.rpcUrl('sepolia'), CALL)).status, 401, 'require_key: a served network needs a key');
    assert.equal((await post(f.app.rpcUrl('holesky'), CALL, callers()['a key scoped to holesky'])).status, 200);
  });

  it('WebSocket handshake: the same order', async () => {
    const handshake = (network: string, headers: Record<string, string>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const ws = new WebSocket(f.app.rpcUrl(network).replace(/^http/, 'ws'), { headers });
        ws.on('unexpected-response', (_req, res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => {
            body += chunk.toString();
          });
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, body });
            ws.terminate();
          });
        });
        ws.on('open', () => {
          resolve({ status: 101, body: '' });
          ws.close();
        });
        ws.on('error', (err) => reject(err));
      });
    for (const [who, headers] of Object.entries(callers())) {
      assert.equal((await handshake('mainnet', headers)).status, 404, who);
      const retired = await handshake('goerli', headers);
      assert.equal(retired.status, 410, who);
      assert.match(retired.body, /"replacement":"sepolia"/, who);
    }
    assert.equal((await handshake('sepolia', callers()['a key scoped to holesky'])).status, 403);
    assert.equal((await handshake('sepolia', { authorization: `Bearer ${BAD_KEY}` })).status, 401);
    assert.equal((await handshake('sepolia', {})).status, 401);
    assert.equal((await handshake('holesky', callers()['a key scoped to holesky'])).status, 101);
  });
});
