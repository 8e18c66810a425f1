/**
 * The injected `BufferPool`: a server releases the streamed pieces it wrote into its own pool, never a
 * process-wide one. Two servers with separate pools keep separate free lists; pieces from a pool the
 * server was not given are not recycled by it (a mismatch costs recycling, never correctness).
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { BufferPool, type Http1App, Http1Server, type ServerExchange } from '../../src/http1/index.js';
import { RawClient } from './raw.js';

const PIECES = 4;

/** Streams PIECES views taken from `from`, each filled with `fill`. */
function appStreaming(from: BufferPool, fill: number): Http1App {
  return {
    request(ex: ServerExchange): void {
      const pieces: Buffer[] = [];
      for (let i = 0; i < PIECES; i += 1) pieces.push(from.take().fill(fill));
      ex.stream(200, [], Buffer.alloc(0), Readable.from(pieces), PIECES * 64 * 1024);
    },
    refused(ex: ServerExchange): void {
      ex.send(400, ['connection', 'close']);
    },
  };
}

const servers: Http1Server[] = [];
after(async () => {
  for (const server of servers) await server.close(100);
});

async function fetchOnce(buffers: BufferPool, app: Http1App): Promise<string> {
  const server = new Http1Server({ maxBodyBytes: 1000, requestTimeoutMs: 5_000, idleTimeoutMs: 5_000, buffers }, app);
  servers.push(server);
  const { port } = await server.listen(0, '127.0.0.1');
  const c = new RawClient(port);
  await c.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  const [answer] = await c.responses(1);
  c.destroy();
  assert.equal(answer?.status, 200);
  return answer?.body ?? '';
}

describe('http1: injected buffer pools', () => {
  it('two servers with separate pools release into their own pool only', async () => {
    const a = new BufferPool();
    const b = new BufferPool();
    const bodyA = await fetchOnce(a, appStreaming(a, 0x61));
    const bodyB = await fetchOnce(b, appStreaming(b, 0x62));
    assert.ok(bodyA === 'a'.repeat(PIECES * 64 * 1024), 'server A sent its own bytes');
    assert.ok(bodyB === 'b'.repeat(PIECES * 64 * 1024), 'server B sent its own bytes');
    // Each written piece went back to the pool it came from, and only there.
    assert.deepEqual(a.stats, { created: PIECES, reused: 0, free: PIECES });
    assert.deepEqual(b.stats, { created: PIECES, reused: 0, free: PIECES });
  });

  it("a server does not recycle pieces of a pool it was not given (the other pool's free list is untouched)", async () => {
    const own = new BufferPool();
    const foreign = new BufferPool();
    const body = await fetchOnce(own, appStreaming(foreign, 0x63));
    assert.ok(body === 'c'.repeat(PIECES * 64 * 1024));
    assert.equal(own.stats.free, 0, 'nothing of another pool enters this one');
    assert.equal(foreign.stats.free, 0, 'the pieces were left to the garbage collector');
  });
});
