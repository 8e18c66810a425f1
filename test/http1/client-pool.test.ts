/**
 * The HTTP/1.1 client (src/http1/index.ts: EndpointPool, ClientExchange) driven directly against real
 * origins on free ports: the connection cap and its FIFO queue, aborts of waiting requests, sockets
 * the origin closed or that said `Connection: close`, the idle time, refused connections, connect / headers / body
 * timeouts, malformed and unsolicited answers, answers split across reads of several sockets, and the
 * stale keep-alive socket rule. (Keep-alive reuse with the gateway's request head:
 * test/gateway/origin-clients.test.ts.)
 */
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { BufferPool, type EndpointPool, type EndpointPoolOptions } from '../../src/http1/index.js';
import { clientFor, post, type UrlClient } from './client-fixture.js';
import { countingServer, rawServer, waitFor } from './servers.js';

const pools: EndpointPool[] = [];
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const pool of pools) pool.destroy();
  for (const cleanup of cleanups) await cleanup();
});

function client(url: string, options: Partial<EndpointPoolOptions> = {}): UrlClient {
  const made = clientFor(url, { connections: 4, connectTimeoutMs: 2_000, buffers: new BufferPool(), ...options });
  pools.push(made.pool);
  return made;
}

async function track<T extends { close(): Promise<void> }>(server: Promise<T>): Promise<T> {
  const started = await server;
  cleanups.push(() => started.close());
  return started;
}

const body = (text: string) => Buffer.from(text);
const codeOf = (err: unknown) => (err as { code?: string }).code;

describe('http1 client: the connection cap and keep-alive', () => {
  it('opens at most `connections` sockets; waiting requests go out first come, first served', async () => {
    const server = await track(countingServer(() => undefined)); // answers are held below
    const target = client(server.url, { connections: 2 });
    const pending = [0, 1, 2, 3, 4].map((i) => post(target, body(String(i)), 5_000));
    await waitFor(() => server.received.length === 2, 'two requests at the origin');
    assert.equal(server.connections, 2);
    assert.equal(target.pool.waiting, 3);
    for (let answered = 0; answered < 5; answered += 1) {
      await waitFor(() => server.received.length > answered, `request ${answered + 1}`);
      const request = server.received[answered];
      request?.res.end(`r${request.body}`);
    }
    const answers = await Promise.all(pending.map((p) => p.response));
    assert.deepEqual(
      answers.map((a) => a.body.toString()),
      ['r0', 'r1', 'r2', 'r3', 'r4'],
    );
    assert.deepEqual(
      server.received.slice(2).map((r) => r.body),
      ['2', '3', '4'],
    );
    assert.equal(server.connections, 2);
  });

  it('a waiting request that is aborted is never written', async () => {
    const server = await track(countingServer(() => undefined));
    const target = client(server.url, { connections: 1 });
    const first = post(target, body('first'), 5_000);
    const second = post(target, body('second'), 5_000);
    const third = post(target, body('third'), 5_000);
    await waitFor(() => server.received.length === 1, 'the first request');
    second.abort(new DOMException('the client went away', 'AbortError'));
    await assert.rejects(second.response, { name: 'AbortError' });
    server.received[0]?.res.end('one');
    assert.equal((await first.response).body.toString(), 'one');
    await waitFor(() => server.received.length === 2, 'the third request');
    server.received[1]?.res.end('three');
    assert.equal((await third.response).body.toString(), 'three');
    assert.deepEqual(
      server.received.map((r) => r.body),
      ['first', 'third'],
    );
    assert.equal(server.connections, 1);
  });

  it('an idle socket the origin closed is dropped, not used', async () => {
    const server = await track(countingServer());
    const target = client(server.url);
    await post(target, body('a'), 5_000).response;
    for (const socket of server.open) socket.destroy();
    await waitFor(() => target.pool.size === 0, 'the client to drop the closed socket');
    assert.equal((await post(target, body('b'), 5_000).response).body.toString(), 'echo:b');
    assert.equal(server.connections, 2);
  });

  it('idleTimeoutMs: an idle socket is closed after it (the default keeps it), and the next request opens one', async () => {
    const server = await track(countingServer());
    const short = client(server.url, { idleTimeoutMs: 100 });
    const kept = client(server.url);
    await post(short, body('a'), 5_000).response;
    await post(kept, body('b'), 5_000).response;
    await waitFor(() => short.pool.size === 0, 'the idle socket to close');
    assert.equal(kept.pool.size, 1);
    assert.equal((await post(short, body('c'), 5_000).response).body.toString(), 'echo:c');
    assert.equal(server.connections, 3);
  });

  it('Connection: close, HTTP/1.0 and Keep-Alive: timeout=1 answers: the socket is not reused', async () => {
    const answers = [
      'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok',
      'HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok',
      'HTTP/1.1 200 OK\r\nKeep-Alive: timeout=1\r\nContent-Length: 2\r\n\r\nok',
    ];
    for (const answer of answers) {
      // The origin leaves its side open: the client alone decides not to reuse.
      const server = await track(rawServer((socket) => socket.write(answer)));
      const target = client(server.url);
      for (let i = 0; i < 3; i += 1) {
        assert.equal((await post(target, body('x'), 5_000).response).body.toString(), 'ok');
      }
      assert.equal(server.sockets.length, 3, answer);
    }
  });
});

describe('http1 client: failures', () => {
  it('a refused connection rejects with ECONNREFUSED, every waiting request at once', async () => {
    const gone = net.createServer();
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    const port = (gone.address() as AddressInfo).port;
    await new Promise<void>((resolve) => gone.close(() => resolve()));
    const target = client(`http://127.0.0.1:${port}`, { connections: 1 });
    const outcomes = await Promise.allSettled([1, 2, 3].map((i) => post(target, body(String(i)), 5_000).response));
    assert.deepEqual(
      outcomes.map((o) => (o.status === 'rejected' ? codeOf(o.reason) : 'answered')),
      ['ECONNREFUSED', 'ECONNREFUSED', 'ECONNREFUSED'],
    );
  });

  it('no TLS handshake within the connect timeout → ORIGIN_CONNECT_TIMEOUT', async () => {
    // Accepts TCP but never speaks TLS: the connection is never established. (It reads and drops the
    // ClientHello, so it sees the client's FIN and can close.)
    const silent = net.createServer((socket) => socket.on('error', () => undefined).resume());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => silent.close(() => resolve())));
    const port = (silent.address() as AddressInfo).port;
    const target = client(`https://127.0.0.1:${port}`, { connectTimeoutMs: 150 });
    await assert.rejects(post(target, body('x'), 5_000).response, { code: 'ORIGIN_CONNECT_TIMEOUT' });
    assert.equal(target.pool.size, 0);
  });

  it('no answer head in time → ORIGIN_HEADERS_TIMEOUT; a body that stalls → ORIGIN_BODY_TIMEOUT', async () => {
    const hang = await track(countingServer(() => undefined));
    const hangTarget = client(hang.url);
    await assert.rejects(post(hangTarget, body('x'), 150).response, { code: 'ORIGIN_HEADERS_TIMEOUT' });
    await waitFor(() => hang.open.size === 0, 'the timed-out socket to close');

    const stall = await track(
      rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello')),
    );
    const stallTarget = client(stall.url);
    await assert.rejects(post(stallTarget, body('x'), 150).response, { code: 'ORIGIN_BODY_TIMEOUT' });
    assert.equal(stallTarget.pool.size, 0);
  });

  it('a malformed answer → ORIGIN_MALFORMED_RESPONSE; its socket is destroyed, the next request gets a new one', async () => {
    const server = await track(
      rawServer((socket, request) =>
        socket.write(
          request.count === 0 && request.connection === 0
            ? 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n'
            : 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
        ),
      ),
    );
    const target = client(server.url);
    await assert.rejects(post(target, body('x'), 5_000).response, { code: 'ORIGIN_MALFORMED_RESPONSE' });
    assert.equal((await post(target, body('y'), 5_000).response).body.toString(), 'ok');
    assert.equal(server.sockets.length, 2);
  });

  it('bytes after an answer, or on an idle socket, get the socket dropped (the answer itself stands)', async () => {
    const trailing = await track(
      rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n\r\n')),
    );
    const trailingTarget = client(trailing.url);
    assert.equal((await post(trailingTarget, body('x'), 5_000).response).body.toString(), 'ok');
    assert.equal(trailingTarget.pool.size, 0);

    const unsolicited = await track(
      rawServer((socket, request) => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
        if (request.count === 0) setImmediate(() => socket.write('HTTP/1.1 408 Request Timeout\r\n\r\n'));
      }),
    );
    const target = client(unsolicited.url);
    assert.equal((await post(target, body('x'), 5_000).response).body.toString(), 'ok');
    await waitFor(() => target.pool.size === 0, 'the socket with unsolicited bytes to be dropped');
    assert.equal((await post(target, body('y'), 5_000).response).body.toString(), 'ok');
    assert.equal(unsolicited.sockets.length, 2);
  });
});

describe('http1 client: reads', () => {
  it('answers arriving in pieces on several sockets at once come out whole (plain TCP reads share one buffer)', async () => {
    // Each connection's answer (head split mid-line, body in four pieces of its own letter) is written
    // piece by piece, round-robin across the connections, paced so they arrive as separate reads that
    // overwrite the shared read buffer in turn. A kept view of that buffer would show another's bytes.
    const connections = 4;
    const waiting: net.Socket[] = [];
    const letters = 'abcd';
    const server = await track(
      rawServer((socket) => {
        waiting.push(socket);
        if (waiting.length < connections) return;
        const rounds = waiting.map((s, i) => {
          const piece = letters[i]?.repeat(3000) ?? '';
          return ['HTTP/1.1 200 OK\r\nContent-Le', `ngth: ${piece.length * 4}\r\n\r\n`, piece, piece, piece, piece].map(
            (bytes) => () => s.write(bytes),
          );
        });
        const send = async () => {
          for (let k = 0; k < 6; k += 1) {
            for (const round of rounds) round[k]?.();
            await new Promise((resolve) => setTimeout(resolve, 5)); // pacing only: any split must work
          }
        };
        void send();
      }),
    );
    const target = client(server.url, { connections });
    const answers = await Promise.all(
      Array.from({ length: connections }, (_, i) => post(target, body(`${i}`), 5_000).response),
    );
    const bodies = answers.map((res) => res.body.toString()).sort();
    assert.deepEqual(
      bodies,
      [...letters].map((letter) => letter.repeat(12_000)),
    );
  });
});

describe('http1 client: a stale keep-alive socket', () => {
  /** Answers the first request of each connection; the second one on the first connection is dropped unanswered. */
  const dropsSecond = () =>
    track(
      rawServer((socket, request) => {
        if (request.connection === 0 && request.count === 1) socket.destroy();
        else socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      }),
    );

  it('a replayable request is sent once more on a fresh connection', async () => {
    const server = await dropsSecond();
    const target = client(server.url);
    await post(target, body('1'), 5_000).response;
    const res = await post(target, body('2'), 5_000, { replayable: true }).response;
    assert.equal(res.body.toString(), 'ok');
    assert.deepEqual(server.requests, [
      { connection: 0, body: '1' },
      { connection: 0, body: '2' },
      { connection: 1, body: '2' },
    ]);
  });

  it('any other request fails with the socket error and is not resent', async () => {
    const server = await dropsSecond();
    const target = client(server.url);
    await post(target, body('1'), 5_000).response;
    await assert.rejects(post(target, body('2'), 5_000).response, (err) =>
      ['ECONNRESET', 'EPIPE', 'ORIGIN_CLOSED'].includes(codeOf(err) ?? ''),
    );
    assert.equal(server.requests.length, 2);
  });

  it('a request that fails on a fresh connection is not replayed (the origin, not a stale socket, dropped it)', async () => {
    const server = await track(rawServer((socket) => socket.destroy()));
    const target = client(server.url);
    await assert.rejects(post(target, body('1'), 5_000, { replayable: true }).response);
    assert.equal(server.requests.length, 1);
  });
});
