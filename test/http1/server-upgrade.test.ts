/**
 * `Http1App.upgrade` over raw sockets: a request asking to switch protocols is handed over with its
 * socket and the bytes the server read after its head (bytes that arrive while earlier answers are
 * still being written, which go out first, wait in the paused socket for the hook); without the hook, or for requests that do not qualify (HTTP/1.0, a
 * body, no `upgrade` in Connection, a protocol not in `upgradeProtocols`), it is an ordinary request; `close(grace)` destroys handed-over
 * sockets still open when the grace ends.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { BufferPool, type Http1App, Http1Server, type ServerExchange } from '../../src/http1/index.js';
import { RawClient, waitFor } from './raw.js';

interface Upgraded {
  readonly exchange: ServerExchange;
  readonly socket: Socket;
  readonly rest: string;
}

/** Answers `/hold` when released, anything else at once; upgrades (when `hook`) echo in upper case. */
class App implements Http1App {
  readonly requests: string[] = [];
  readonly upgraded: Upgraded[] = [];
  held: ServerExchange | undefined;
  upgrade?: (exchange: ServerExchange, socket: Socket, rest: Buffer) => void;
  upgradeProtocols?: readonly string[];

  constructor(hook: boolean) {
    if (!hook) return;
    this.upgrade = (exchange, socket, rest) => {
      this.upgraded.push({ exchange, socket, rest: rest.toString('latin1') });
      socket.on('error', () => undefined);
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
      socket.on('data', (chunk: Buffer) => socket.write(chunk.toString('latin1').toUpperCase()));
      socket.resume();
    };
  }

  request(ex: ServerExchange): void {
    this.requests.push(`${ex.method} ${ex.target}`);
    if (ex.target === '/hold') {
      this.held = ex;
      return;
    }
    ex.send(ex.method === 'GET' ? 405 : 200, ['x-target', ex.target], Buffer.from('plain'));
  }

  refused(ex: ServerExchange): void {
    ex.send(400, ['connection', 'close']);
  }
}

const servers: Http1Server[] = [];
after(async () => {
  for (const server of servers) await server.close(100);
});

async function start(app: App): Promise<{ server: Http1Server; port: number }> {
  const server = new Http1Server(
    { maxBodyBytes: 1000, requestTimeoutMs: 5_000, idleTimeoutMs: 5_000, buffers: new BufferPool() },
    app,
  );
  servers.push(server);
  const { port } = await server.listen(0, '127.0.0.1');
  return { server, port };
}

const UPGRADE = 'GET /ws?x=1 HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Upgrade\r\nUpgrade: echo\r\n\r\n';

describe('http1 server: upgrade hook', () => {
  it('hands the socket and the bytes after the head to the hook, which then owns the connection', async () => {
    const app = new App(true);
    const { server, port } = await start(app);
    const c = new RawClient(port);
    await c.send(`${UPGRADE}first`);
    await waitFor(() => app.upgraded.length === 1, 5_000, 'the hook');
    const [up] = app.upgraded;
    assert.equal(up?.exchange.target, '/ws?x=1');
    assert.equal(up?.exchange.header('upgrade'), 'echo');
    assert.deepEqual(up?.exchange.headerLines('connection'), ['keep-alive, Upgrade'], 'every field line of a header');
    assert.deepEqual(up?.exchange.headerLines('x-absent'), []);
    assert.equal(up?.rest, 'first');
    assert.deepEqual(app.requests, [], 'not an ordinary request');
    assert.equal(server.inFlight, 0);
    await c.send('more bytes');
    await waitFor(() => c.data.endsWith('MORE BYTES'), 5_000, 'the echo');
    assert.ok(c.data.startsWith('HTTP/1.1 101 Switching Protocols\r\n'));
    c.destroy();
  });

  it('waits for earlier answers on the connection, which go out first; later bytes wait in the socket', async () => {
    const app = new App(true);
    const { port } = await start(app);
    const c = new RawClient(port);
    await c.send(`GET /hold HTTP/1.1\r\nHost: x\r\n\r\n${UPGRADE}early`);
    await waitFor(() => app.held !== undefined, 5_000, 'the held request');
    await c.send('-later');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(app.upgraded.length, 0, 'not before the earlier answer is written');
    app.held?.send(200, [], Buffer.from('held answer'));
    await waitFor(() => app.upgraded.length === 1, 5_000, 'the hook');
    assert.equal(app.upgraded[0]?.rest, 'early');
    await waitFor(() => c.data.endsWith('-LATER'), 5_000, 'the later bytes, read by the hook');
    assert.ok(c.data.indexOf('held answer') < c.data.indexOf('101 Switching'), 'answers in order');
    assert.deepEqual(app.requests, ['GET /hold']);
    c.destroy();
  });

  it('without the hook, an upgrade request is an ordinary request and the connection stays usable', async () => {
    const app = new App(false);
    const { port } = await start(app);
    const c = new RawClient(port);
    await c.send(UPGRADE);
    const [first] = await c.responses(1);
    assert.equal(first?.status, 405);
    await c.send('POST /next HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi');
    const [, second] = await c.responses(2);
    assert.equal(second?.status, 200);
    assert.deepEqual(app.requests, ['GET /ws?x=1', 'POST /next']);
    c.destroy();
  });

  it('requests that do not qualify stay ordinary even with the hook', async () => {
    const app = new App(true);
    const { port } = await start(app);
    const cases = [
      'GET /a HTTP/1.0\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n',
      'POST /b HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\nContent-Length: 2\r\n\r\nhi',
      'GET /c HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\n\r\n',
      'GET /d HTTP/1.1\r\nHost: x\r\nConnection: upgraded\r\nUpgrade: echo\r\n\r\n',
    ];
    for (const request of cases) {
      const c = new RawClient(port);
      await c.send(request);
      const [answer] = await c.responses(1);
      assert.ok(answer?.status === 405 || answer?.status === 200, request);
      c.destroy();
    }
    assert.deepEqual(app.requests, ['GET /a', 'POST /b', 'GET /c', 'GET /d']);
    assert.equal(app.upgraded.length, 0);
  });

  it('with upgradeProtocols, only an Upgrade naming one of them is handed over; others stay ordinary', async () => {
    const app = new App(true);
    app.upgradeProtocols = ['echo'];
    const { port } = await start(app);
    const plain = new RawClient(port);
    await plain.send('GET /h2 HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n\r\n');
    const [answer] = await plain.responses(1);
    assert.equal(answer?.status, 405, 'an h2c upgrade is answered as an ordinary GET');
    plain.destroy();
    const listed = new RawClient(port);
    await listed.send('GET /both HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: h2c, Echo/1\r\n\r\n');
    await waitFor(() => app.upgraded.length === 1, 5_000, 'the hook');
    assert.equal(app.upgraded[0]?.exchange.target, '/both');
    assert.deepEqual(app.requests, ['GET /h2']);
    listed.destroy();
  });

  it('close(grace) destroys handed-over sockets still open when the grace ends', async () => {
    const app = new App(true);
    const { server, port } = await start(app);
    const c = new RawClient(port);
    await c.send(UPGRADE);
    await waitFor(() => app.upgraded.length === 1, 5_000, 'the hook');
    await server.close(50);
    await c.waitClosed();
  });
});
