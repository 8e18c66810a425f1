/**
 * The wire listener over real sockets, with a small application: pipelined answers in request order
 * (and the pipelining bound), chunked bodies, Expect: 100-continue, each smuggling vector refused and
 * the connection closed, head/body limits, HTTP/1.0, HEAD, idle and request timeouts (small timeouts
 * injected), TLS (ALPN http/1.1), graceful close, and streamed answers (client leaving stops the
 * source; a source failing midway cuts the connection).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import {
  BufferPool,
  type Http1App,
  Http1Server,
  type RequestRefusal,
  type ServerExchange,
} from '../../src/http1/index.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { INVALID } from './corpus.js';
import { RawClient, waitFor } from './raw.js';

const STATUS: Record<RequestRefusal['kind'], number> = {
  malformed: 400,
  'head-too-large': 431,
  'body-too-large': 413,
  'unsupported-encoding': 501,
  timeout: 408,
  aborted: 400,
};

/**
 * A test application: /hold/* waits for release, /early answers without reading the body, /stream/*
 * streams `source`; any other target reads and echoes the body.
 */
class TestApp implements Http1App {
  readonly held = new Map<string, ServerExchange>();
  seen = 0;
  source: Readable | undefined;

  request(ex: ServerExchange): void {
    this.seen += 1;
    if (ex.target.startsWith('/hold/')) {
      this.held.set(ex.target, ex);
      return;
    }
    if (ex.target === '/early') {
      ex.send(404, ['x-target', ex.target], Buffer.from('nope'));
      return;
    }
    if (ex.target.startsWith('/stream')) {
      const source = this.source as Readable;
      const length = ex.target === '/stream/length' ? 4 + 3 * 1024 * 1024 : undefined;
      ex.stream(200, ['content-type', 'text/plain'], Buffer.from('head'), source, length);
      return;
    }
    ex.readBody().then(
      (body) => ex.send(200, ['x-method', ex.method, 'x-target', ex.target], body),
      (err: RequestRefusal) => this.refused(ex, err),
    );
  }

  refused(ex: ServerExchange, err: RequestRefusal): void {
    ex.send(STATUS[err.kind], ['x-kind', err.kind, 'connection', 'close'], Buffer.from(err.message));
  }

  release(target: string, body = target): void {
    const ex = this.held.get(target);
    assert.ok(ex, `${target} was received`);
    ex.send(200, ['x-target', target], Buffer.from(body));
  }
}

/** A started server: its port, and the server itself (inFlight, close). */
interface Listener {
  readonly port: number;
  readonly inFlight: number;
  close(graceMs: number): Promise<void>;
}

async function start(
  app: TestApp,
  options: { requestTimeoutMs?: number; idleTimeoutMs?: number; tls?: boolean } = {},
): Promise<Listener> {
  const server = new Http1Server(
    {
      maxBodyBytes: 1000,
      requestTimeoutMs: options.requestTimeoutMs ?? 5_000,
      idleTimeoutMs: options.idleTimeoutMs ?? 5_000,
      tls: options.tls
        ? {
            cert: readFileSync(join(REPO_ROOT, 'test/gateway/fixtures/tls-cert.pem')),
            key: readFileSync(join(REPO_ROOT, 'test/gateway/fixtures/tls-key.pem')),
          }
        : undefined,
      buffers: new BufferPool(),
    },
    app,
  );
  const { port } = await server.listen(0, '127.0.0.1');
  return {
    port,
    get inFlight() {
      return server.inFlight;
    },
    close: (graceMs) => server.close(graceMs),
  };
}

const get = (target: string, extra = '') => `GET ${target} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;
const post = (target: string, body: string, extra = '') =>
  `POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: ${Buffer.byteLength(body, 'latin1')}\r\n${extra}\r\n${body}`;

describe('wire listener', () => {
  const app = new TestApp();
  let listener: Listener;
  const clients: RawClient[] = [];
  const client = () => {
    const c = new RawClient(listener.port);
    clients.push(c);
    return c;
  };

  before(async () => {
    listener = await start(app);
  });
  after(async () => {
    for (const c of clients) c.destroy();
    await listener.close(1000);
  });

  it('answers pipelined requests strictly in request order, whatever order they finish in', async () => {
    const c = client();
    await c.send(get('/hold/a') + post('/echo', 'middle') + get('/hold/c'));
    await waitFor(() => app.held.has('/hold/c'), 5_000, 'all three requests');
    app.release('/hold/c');
    // /echo and /hold/c are answered but must wait for /hold/a; a round trip on another connection
    // gives them every chance to leak out early.
    const other = client();
    await other.send(post('/echo', 'x'));
    await other.responses(1);
    assert.equal(c.data, '', 'nothing is written before the first answer');
    app.release('/hold/a');
    const answers = await c.responses(3);
    assert.deepEqual(
      answers.map((r) => [r.status, r.headers['x-target'], r.body]),
      [
        [200, '/hold/a', '/hold/a'],
        [200, '/echo', 'middle'],
        [200, '/hold/c', '/hold/c'],
      ],
    );
    assert.equal(c.closed, false, 'the connection stays open (keep-alive)');
  });

  it('stops reading after 16 unanswered pipelined requests, and reads on as they are answered', async () => {
    const c = client();
    const before = app.seen;
    await c.send(Array.from({ length: 20 }, (_, i) => get(`/hold/p${i}`)).join(''));
    await waitFor(() => app.seen - before >= 16, 5_000, '16 requests');
    const other = client();
    await other.send(post('/echo', 'x'));
    await other.responses(1);
    assert.equal(app.seen - before - 1, 16, 'the 17th request is not read while 16 are unanswered');
    app.release('/hold/p0');
    await waitFor(() => app.held.has('/hold/p16'), 5_000, 'the 17th request');
    for (let i = 1; i < 20; i += 1) {
      await waitFor(() => app.held.has(`/hold/p${i}`), 5_000, `request ${i}`);
      app.release(`/hold/p${i}`);
    }
    const answers = await c.responses(20);
    assert.deepEqual(
      answers.map((r) => r.body),
      Array.from({ length: 20 }, (_, i) => `/hold/p${i}`),
    );
  });

  it('reads chunked request bodies, split anywhere, and keeps the connection', async () => {
    const c = client();
    const request =
      'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nwire\r\n6\r\n-chunk\r\n0\r\nTrailer: x\r\n\r\n';
    for (let i = 0; i < request.length; i += 7) await c.send(request.slice(i, i + 7));
    await c.send(post('/echo', 'again'));
    const answers = await c.responses(2);
    assert.deepEqual(
      answers.map((r) => r.body),
      ['wire-chunk', 'again'],
    );
  });

  it('answers Expect: 100-continue with 100 when the body is read, and not when it answers first', async () => {
    const c = client();
    await c.send('POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n');
    await waitFor(() => c.data.includes('\r\n\r\n'), 5_000, 'the 100');
    assert.equal(c.data, 'HTTP/1.1 100 Continue\r\n\r\n');
    await c.send('hello');
    const [, final] = await c.responses(2);
    assert.equal(final?.status, 200);
    assert.equal(final?.body, 'hello');

    const early = client();
    await early.send('POST /early HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n');
    const [answer] = await early.responses(1);
    assert.equal(answer?.status, 404);
    assert.equal(answer?.headers.connection, 'close', 'the client may never send the body: close');
    await early.waitClosed();
  });

  it('refuses every smuggling vector and malformed request with its status, then closes', async () => {
    for (const [name, [text, kind]] of Object.entries(INVALID)) {
      const c = client();
      // Any other target reads the body, so body refusals (413) come through readBody.
      await c.send(text);
      const [answer] = await c.responses(1);
      assert.equal(answer?.status, STATUS[kind], `${name}: ${c.data.slice(0, 80)}`);
      assert.equal(answer?.headers['x-kind'], kind, name);
      await c.waitClosed();
    }
  });

  it('closes after an early answer when the body turns out malformed; drains a valid unread body', async () => {
    const c = client();
    await c.send(post('/early', 'unread body') + post('/echo', 'next'));
    const answers = await c.responses(2);
    assert.deepEqual(
      answers.map((r) => r.status),
      [404, 200],
    );
    const bad = client();
    await bad.send('POST /early HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX');
    await bad.waitClosed();
    assert.equal((await bad.responses(1))[0]?.status, 404);
  });

  it('HTTP/1.0: closes unless keep-alive was asked, and says keep-alive when it was', async () => {
    const c = client();
    await c.send('POST /echo HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi');
    const [answer] = await c.responses(1);
    assert.equal(answer?.body, 'hi');
    assert.equal(answer?.headers.connection, 'close');
    await c.waitClosed();

    const kept = client();
    await kept.send('GET /echo HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
    await kept.send('POST /echo HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nz');
    const answers = await kept.responses(2);
    assert.deepEqual(
      answers.map((r) => [r.headers.connection, r.body]),
      [
        ['keep-alive', ''],
        ['keep-alive', 'z'],
      ],
    );
  });

  it('answers HEAD without a body; closes on Connection: close; sends a cached date', async () => {
    const c = client();
    await c.send(`HEAD /early HTTP/1.1\r\nHost: x\r\n\r\n${get('/echo', 'Connection: close\r\n')}`);
    await c.waitClosed();
    assert.match(c.data, /^HTTP\/1\.1 404 Not Found\r\ndate: \w{3}, \d\d \w{3} \d{4} [\d:]{8} GMT\r\n/);
    assert.match(c.data, /content-length: 4\r\n\r\nHTTP\/1\.1 200 OK\r\n/, 'no body after the HEAD answer');
    assert.match(c.data, /connection: close\r\n\r\n$/);
  });
});

describe('wire listener timeouts', () => {
  const app = new TestApp();
  let listener: Listener;
  const clients: RawClient[] = [];
  before(async () => {
    listener = await start(app, { requestTimeoutMs: 300, idleTimeoutMs: 300 });
  });
  after(async () => {
    for (const c of clients) c.destroy();
    await listener.close(1000);
  });
  const client = () => {
    const c = new RawClient(listener.port);
    clients.push(c);
    return c;
  };

  it('closes an idle connection silently, fresh or after an answer', async () => {
    const fresh = client();
    await fresh.connected();
    const used = client();
    await used.send(post('/echo', 'x'));
    await used.responses(1);
    await fresh.waitClosed(3_000);
    await used.waitClosed(3_000);
    assert.equal(fresh.data, '');
  });

  it('answers 408 and closes when a head or a body does not arrive in time', async () => {
    const partialHead = client();
    await partialHead.send('POST /echo HTTP/1.1\r\nHost: x\r\n');
    const partialBody = client();
    await partialBody.send('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc');
    for (const c of [partialHead, partialBody]) {
      await c.waitClosed(3_000);
      const [answer] = await c.responses(1);
      assert.equal(answer?.status, 408);
      assert.equal(answer?.headers['x-kind'], 'timeout');
    }
  });

  it('does not time out a request the application is still answering', async () => {
    const c = client();
    await c.send(get('/hold/slow'));
    await waitFor(() => app.held.has('/hold/slow'));
    const started = Date.now();
    await waitFor(() => Date.now() - started > 900, 2_000); // three timeouts' worth of waiting
    assert.equal(c.closed, false);
    app.release('/hold/slow');
    assert.equal((await c.responses(1))[0]?.status, 200);
  });
});

describe('wire listener over TLS', () => {
  it('speaks HTTP/1.1 (ALPN) with pipelining', async () => {
    const app = new TestApp();
    const listener = await start(app, { tls: true });
    const c = new RawClient(listener.port, {
      tls: { ca: readFileSync(join(REPO_ROOT, 'test/gateway/fixtures/tls-cert.pem')) },
    });
    try {
      await c.connected();
      assert.equal((c.socket as import('node:tls').TLSSocket).alpnProtocol, 'http/1.1');
      await c.send(post('/echo', 'one') + post('/echo', 'two'));
      const answers = await c.responses(2);
      assert.deepEqual(
        answers.map((r) => r.body),
        ['one', 'two'],
      );
    } finally {
      c.destroy();
      await listener.close(1000);
    }
  });
});

describe('wire listener graceful close', () => {
  it('closes idle and half-sent connections at once, finishes requests in flight, refuses new ones', async () => {
    const app = new TestApp();
    const listener = await start(app);
    const idle = new RawClient(listener.port);
    await idle.send(post('/echo', 'x'));
    await idle.responses(1);
    const half = new RawClient(listener.port);
    await half.send('POST /echo HTTP/1.1\r\nHost: x\r\n');
    const busy = new RawClient(listener.port);
    await busy.send(get('/hold/busy'));
    await waitFor(() => app.held.has('/hold/busy'));
    assert.equal(listener.inFlight, 1);

    let closed = false;
    const closing = listener.close(10_000).then(() => {
      closed = true;
    });
    await idle.waitClosed(2_000);
    await half.waitClosed(2_000);
    const refused = await new Promise<string>((resolve) => {
      const s = net.connect(listener.port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve('connected');
      });
      s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    assert.equal(refused, 'ECONNREFUSED');
    assert.equal(closed, false, 'a request is still in flight');
    app.release('/hold/busy');
    const [answer] = await busy.responses(1);
    assert.equal(answer?.status, 200);
    assert.equal(answer?.headers.connection, 'close');
    await busy.waitClosed(2_000);
    await closing;
    assert.equal(listener.inFlight, 0);
  });

  it('cuts what is still open after the grace period', async () => {
    const app = new TestApp();
    const listener = await start(app);
    const stuck = new RawClient(listener.port);
    await stuck.send(get('/hold/never'));
    await waitFor(() => app.held.has('/hold/never'));
    const started = Date.now();
    await listener.close(200);
    assert.ok(Date.now() - started < 3_000);
    await stuck.waitClosed(2_000);
    assert.equal(stuck.data, '');
  });
});

describe('wire listener streamed answers', () => {
  const app = new TestApp();
  let listener: Listener;
  before(async () => {
    listener = await start(app);
  });
  after(() => listener.close(1000));

  /** A source of `total` bytes made on demand; records whether it was destroyed and how much was read. */
  function source(total: number, failAfter?: number) {
    const state = { produced: 0, destroyed: false };
    const stream = new Readable({
      highWaterMark: 16 * 1024,
      read() {
        if (failAfter !== undefined && state.produced >= failAfter) {
          this.destroy(new Error('origin failed midway'));
          return;
        }
        if (state.produced >= total) {
          this.push(null);
          return;
        }
        const n = Math.min(64 * 1024, total - state.produced);
        state.produced += n;
        this.push(Buffer.alloc(n, 0x61));
      },
      destroy(err, callback) {
        state.destroyed = true;
        callback(err);
      },
    });
    return { stream, state };
  }

  it('streams with content-length, and chunked when the length is unknown', async () => {
    const sized = source(3 * 1024 * 1024);
    app.source = sized.stream;
    const c = new RawClient(listener.port);
    await c.send(get('/stream/length'));
    const [answer] = await c.responses(1, 10_000);
    assert.equal(answer?.body.length, 4 + 3 * 1024 * 1024);
    assert.ok(answer?.body.startsWith('headaaa'));

    const unsized = source(100_000);
    app.source = unsized.stream;
    await c.send(get('/stream/chunked'));
    const [, chunked] = await c.responses(2, 10_000);
    assert.equal(chunked?.headers['transfer-encoding'], 'chunked');
    assert.equal(chunked?.body.length, 4 + 100_000);
    c.destroy();
  });

  it('stops reading the source when the client leaves midway', async () => {
    const big = source(512 * 1024 * 1024);
    app.source = big.stream;
    const c = new RawClient(listener.port);
    c.socket.pause(); // do not read: the server's buffers fill and the source is paused
    await c.send(get('/stream/chunked'));
    await waitFor(() => big.state.produced > 0);
    c.destroy();
    await waitFor(() => big.state.destroyed, 5_000, 'the source to be destroyed');
    assert.ok(big.state.produced < 512 * 1024 * 1024, 'the source was not read to its end');
  });

  it('cuts the connection when the source fails midway (a truncated answer, never a wrong one)', async () => {
    const failing = source(3 * 1024 * 1024, 256 * 1024);
    app.source = failing.stream;
    const c = new RawClient(listener.port);
    await c.send(get('/stream/length'));
    await c.waitClosed(5_000);
    const headEnd = c.data.indexOf('\r\n\r\n');
    assert.match(c.data, /content-length: 3145732/);
    assert.ok(c.data.length - headEnd - 4 < 4 + 3 * 1024 * 1024, 'the answer is cut short');
  });
});
