/**
 * A client that leaves while its call waits on an origin: the gateway stops that origin request (its
 * connection is closed, since HTTP/1.1 cannot cancel a request otherwise) and tries no other origin —
 * nobody is waiting for the answer, and the origin is not blamed for it.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import { poolOf, startApp } from '../helpers/app.js';
import { fromChainTracker } from '../helpers/http.js';
import { rawServer, waitFor } from '../http1/servers.js';

describe('a client that leaves while its call waits on an origin', () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('closes the origin request and tries no other origin', async () => {
    const silent = await rawServer(() => undefined); // reads the request, never answers
    const spare = await rawServer(() => undefined);
    cleanups.push(
      () => silent.close(),
      () => spare.close(),
    );
    const app = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['first', 'second'] } },
      pools: [poolOf('first', [silent.url]), poolOf('second', [spare.url])],
    });
    cleanups.push(() => app.close());

    const url = new URL(app.rpcUrl());
    const body = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}';
    const client = net.connect(Number(url.port), url.hostname);
    client.on('error', () => undefined);
    client.write(
      `POST ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\n` +
        `content-length: ${body.length}\r\n\r\n${body}`,
    );
    // The chain tracker's head polls reach both origins too (and hang on them): count the client's call only.
    const calls = (server: typeof silent) => server.requests.filter((r) => !fromChainTracker(r.body));
    await waitFor(() => calls(silent).length === 1, 'the call to reach the first origin');
    const originSocket = silent.sockets[calls(silent)[0]?.connection ?? -1];
    assert.ok(originSocket);
    let originClosed = false;
    originSocket.once('close', () => {
      originClosed = true;
    });
    client.destroy();
    await waitFor(() => originClosed, 'the origin request to be closed', 10_000);
    assert.equal(calls(spare).length, 0, 'no other origin was tried for a client that left');
  });
});
