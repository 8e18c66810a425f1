/**
 * The stale keep-alive socket rule through the gateway: an origin that drops its idle connection just
 * as the gateway reuses it for the next call (it reads the request, then closes without answering).
 * A read is sent once more on a fresh connection and the client never sees the race; a write is not
 * resent (it may have arrived), so the client gets the failure and the origin saw it exactly once.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { fromChainTracker, rpc } from '../helpers/http.js';
import { type RawServer, rawServer } from '../http1/servers.js';

const RAW_TX = `0x${'ab'.repeat(100)}`;

/**
 * Answers every call with `"0x1"` as JSON-RPC, except the second client call on the connection of the
 * first: dropped. The chain tracker's head polls come on sockets of their own (gateway.ts): answered,
 * never dropped, not counted.
 */
function dropsSecondOnFirstConnection(): Promise<RawServer> {
  let first: number | undefined;
  let onFirst = 0;
  return rawServer((socket, request) => {
    if (!fromChainTracker(request.body)) {
      first ??= request.connection;
      if (request.connection === first && onFirst++ === 1) {
        socket.destroy();
        return;
      }
    }
    const id = (JSON.parse(request.body) as { id: unknown }).id;
    const body = JSON.stringify({ jsonrpc: '2.0', id, result: '0x1' });
    socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
  });
}

/** The connections the client's calls came on, in order. */
const clientConnections = (origin: RawServer) =>
  origin.requests.filter((r) => !fromChainTracker(r.body)).map((r) => r.connection);

describe('a keep-alive socket the origin drops as it is reused', () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  async function gatewayFor(origin: RawServer): Promise<TestApp> {
    cleanups.push(() => origin.close());
    const app = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['main'] } },
      pools: [poolOf('main', [origin.url])],
    });
    cleanups.push(() => app.close());
    return app;
  }

  it('a read is replayed on a fresh connection: the client gets its answer', async () => {
    const origin = await dropsSecondOnFirstConnection();
    const app = await gatewayFor(origin);
    assert.equal((await rpc(app.rpcUrl(), 'eth_blockNumber', [], 1)).answer.result, '0x1');
    const second = await rpc(app.rpcUrl(), 'eth_blockNumber', [], 2);
    assert.equal(second.status, 200);
    assert.deepEqual(second.answer, { jsonrpc: '2.0', id: 2, result: '0x1' });
    const [one, two, three, ...more] = clientConnections(origin);
    assert.deepEqual(
      [two === one, three !== one, more],
      [true, true, []],
      'the second call went out on the reused socket, then once more on a new one',
    );
  });

  it('a write is not resent: the client gets 502 and the origin saw it once', async () => {
    const origin = await dropsSecondOnFirstConnection();
    const app = await gatewayFor(origin);
    assert.equal((await rpc(app.rpcUrl(), 'eth_blockNumber', [], 1)).answer.result, '0x1');
    const write = await rpc(app.rpcUrl(), 'eth_sendRawTransaction', [RAW_TX], 2);
    assert.equal(write.status, 502);
    assert.equal(write.answer.error?.code, -32002);
    assert.match(write.answer.error?.message ?? '', /ORIGIN_CLOSED/);
    assert.equal(origin.requests.filter((r) => r.body.includes('eth_sendRawTransaction')).length, 1);
    assert.equal(clientConnections(origin).length, 2);
  });
});
