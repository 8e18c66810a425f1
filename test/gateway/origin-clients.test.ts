/**
 * The gateway's origin clients (src/gateway/upstream/origin-clients.ts) against a real origin on a free
 * port: what a request carries is built from the origin's address and header map (path and query as
 * stored, Basic auth from user:password, the configured headers), and consecutive requests to one
 * origin share one keep-alive socket. The HTTP/1.1 client itself: test/http1/client-*.test.ts.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { exchange, OriginClients } from '../../src/gateway/upstream/origin-clients.js';
import { BufferPool } from '../../src/http1/index.js';
import { countingServer } from '../http1/servers.js';
import { originOf } from './origin-fixture.js';

const clients: OriginClients[] = [];
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const client of clients) await client.close();
  for (const cleanup of cleanups) await cleanup();
});

function client(): OriginClients {
  const made = new OriginClients({ connectionsPerOrigin: 4, connectTimeoutMs: 2_000, buffers: new BufferPool() });
  clients.push(made);
  return made;
}

const body = (text: string) => Buffer.from(text);

describe('origin clients: the request an origin address makes', () => {
  it('consecutive requests share one socket; the head carries path, query, Basic auth and headers', async () => {
    const server = await countingServer();
    cleanups.push(() => server.close());
    const port = new URL(server.url).port;
    const target = client().target(
      originOf(`http://us%20er:p%40ss@127.0.0.1:${port}/v1/key?x=1`, { 'X-Api-Key': ['k1', 'k2'] }),
    );
    for (let i = 0; i < 20; i += 1) {
      const res = await exchange(target, body(`{"i":${i}}`), 5_000).response;
      assert.equal(res.status, 200);
      assert.equal(res.body.toString(), `echo:{"i":${i}}`);
    }
    assert.equal(server.connections, 1);
    const first = server.received[0];
    assert.ok(first);
    assert.equal(first.method, 'POST');
    assert.equal(first.url, '/v1/key?x=1');
    assert.equal(first.headers.host, `127.0.0.1:${port}`);
    assert.equal(first.headers.authorization, `Basic ${Buffer.from('us er:p@ss').toString('base64')}`);
    assert.equal(first.headers['x-api-key'], 'k1, k2');
    assert.equal(first.headers['content-type'], 'application/json');
    assert.equal(first.headers.accept, 'application/json');
    assert.equal(first.headers['content-length'], '7');
  });
});
