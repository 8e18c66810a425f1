/**
 * Persistent connections to origins (SPEC §2 "persistent keep-alive connections per origin"): a run of
 * calls reuses the gateway's sockets instead of opening one per call, for single requests and for the
 * calls of a batch. The origin is a real node:http server on a free port that counts the TCP connections
 * client calls come on.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { fromChainTracker, post, type RpcAnswer } from '../helpers/http.js';

describe('keep-alive connections to an origin', () => {
  let server: http.Server;
  const clientSockets = new Set<unknown>();
  let requests = 0;
  let app: TestApp;

  before(async () => {
    server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        // The chain tracker's head polls come on sockets of their own (gateway.ts): count client calls only.
        if (!fromChainTracker(text)) {
          requests += 1;
          clientSockets.add(req.socket);
        }
        const { id } = JSON.parse(text) as { id: unknown };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0xaa36a7' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    app = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
      pools: [poolOf('p', [url])],
      // The response cache would answer repeated calls without the origin; this test is about sockets.
      gateway: { cache_max_bytes: 0 },
    });
  });

  after(async () => {
    await app?.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sequential calls share one socket', async () => {
    const before = clientSockets.size;
    for (let i = 0; i < 30; i += 1) {
      const res = await post(app.rpcUrl(), `{"jsonrpc":"2.0","id":${i},"method":"eth_blockNumber","params":[]}`);
      assert.equal(res.json<RpcAnswer>().result, '0xaa36a7', res.text);
    }
    assert.ok(requests >= 30);
    const opened = clientSockets.size - before;
    assert.ok(opened <= 1, `30 sequential calls opened ${opened} connections`);
  });

  it('the calls of a batch run over a few reused sockets, not one per call per batch', async () => {
    const batch = `[${Array.from({ length: 10 }, (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"eth_blockNumber"}`).join(',')}]`;
    await post(app.rpcUrl(), batch);
    const before = clientSockets.size;
    for (let i = 0; i < 10; i += 1) {
      const res = await post(app.rpcUrl(), batch);
      assert.equal(res.json<RpcAnswer[]>().length, 10);
    }
    const opened = clientSockets.size - before;
    assert.ok(opened <= 2, `10 batches of 10 opened ${opened} new connections`);
  });
});
