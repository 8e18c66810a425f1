/**
 * The monitors' HTTP client (src/health/probes/transport.ts, on the project's HTTP/1.1 client) against
 * real local servers, some of them raw TCP servers that write exactly the bytes a case needs: what goes
 * on the wire, HEAD answers, the body cap, the rtt, broken answers, a stale keep-alive socket, and the
 * shared pools' life.
 */
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { systemClock } from '../../src/clock.js';
import { checkOrigin } from '../../src/health/probes/check.js';
import { isProbeResponse, type ProbeRequest, ProbeTransport } from '../../src/health/probes/transport.js';
import { withMonitorDefaults } from '../../src/model/monitor-schema.js';
import { OutboundPolicy } from '../../src/outbound/policy.js';
import { rawServer } from '../http1/servers.js';

async function httpServer(handler: Parameters<typeof createHttpServer>[1]): Promise<{ server: Server; port: number }> {
  const server = createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

function request(port: number, change: Partial<ProbeRequest> = {}): ProbeRequest {
  return {
    url: new URL(`http://127.0.0.1:${port}/health?x=1`),
    method: 'GET',
    headers: { 'user-agent': 'Switchyard-Health-Monitor' },
    timeoutMs: 5_000,
    allowInsecure: false,
    maxBodyBytes: 64 * 1024,
    replayable: true,
    ...change,
  };
}

const origin = (address: string) => ({ name: 'o', address, enabled: true, weight: 1, header: {} });

describe('probe transport', () => {
  const transport = new ProbeTransport({ outbound: new OutboundPolicy({ trustedAccounts: [] }), clock: systemClock });
  after(() => transport.close());

  it('sends Host, the headers given (each value of a list on its own line), and Content-Length only with a body', async () => {
    const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; raw: string[] }> = [];
    const { server, port } = await httpServer((req, res) => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, raw: req.rawHeaders });
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    try {
      const got = await transport.send(request(port, { headers: { 'x-list': ['a', 'b'], accept: 'text/plain' } }));
      assert.ok(isProbeResponse(got));
      assert.deepEqual([got.status, got.body, got.location], [200, 'ok', undefined]);
      const posted = await transport.send(request(port, { method: 'POST', body: '{"id":1}' }));
      assert.ok(isProbeResponse(posted));
      const [get, post] = seen;
      assert.deepEqual([get?.method, get?.url, get?.headers.host], ['GET', '/health?x=1', `127.0.0.1:${port}`]);
      assert.equal(get?.headers['content-length'], undefined);
      assert.deepEqual(
        get?.raw.filter((_, i, raw) => raw[i - 1] === 'x-list'),
        ['a', 'b'],
      );
      assert.deepEqual([post?.method, post?.headers['content-length']], ['POST', '8']);
      // A Host the monitor sets replaces the destination's.
      await transport.send(request(port, { headers: { Host: 'node.example' } }));
      assert.equal(seen[2]?.headers.host, 'node.example');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('HEAD: an answer that announces a body it never sends ends at its head, and the socket is kept', async () => {
    const server = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: text/html\r\n\r\n');
    });
    try {
      for (let i = 0; i < 3; i += 1) {
        const got = await transport.send(request(server.port, { method: 'HEAD', timeoutMs: 10_000 }));
        assert.ok(isProbeResponse(got), JSON.stringify(got));
        assert.deepEqual([got.status, got.body], [200, '']);
      }
      assert.equal(server.sockets.length, 1);
    } finally {
      await server.close();
    }
  });

  it('keeps maxBodyBytes of a larger body, and drops that connection', async () => {
    const body = `${'a'.repeat(100 * 1024)}needle`;
    const { server, port } = await httpServer((_req, res) => res.end(body));
    let connections = 0;
    server.on('connection', () => {
      connections += 1;
    });
    try {
      const got = await transport.send(request(port, { maxBodyBytes: 64 * 1024 }));
      assert.ok(isProbeResponse(got));
      assert.equal(got.body.length, 64 * 1024);
      assert.equal(got.body, body.slice(0, 64 * 1024));
      const whole = await transport.send(request(port, { maxBodyBytes: 1024 * 1024 }));
      assert.ok(isProbeResponse(whole));
      assert.equal(whole.body, body);
      assert.equal(connections, 2, 'the cut answer left its socket');
      // Through the http check: expected_body past the first 64 KiB is not seen.
      const check = await checkOrigin(
        transport,
        origin(`http://127.0.0.1:${port}`),
        withMonitorDefaults({ type: 'http', expected_body: 'needle', retries: 0 }),
        [],
      );
      assert.equal(check.failure_reason, 'response body does not contain "needle"');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("rtt is the time to the answer's head, not to its end", async () => {
    const HEAD_DELAY_MS = 200;
    const BODY_DELAY_MS = 1_000;
    const { server, port } = await httpServer((_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-length': '2' });
        res.flushHeaders();
        setTimeout(() => res.end('ok'), BODY_DELAY_MS);
      }, HEAD_DELAY_MS);
    });
    try {
      const started = performance.now();
      const got = await transport.send(request(port));
      assert.ok(isProbeResponse(got));
      assert.ok(performance.now() - started >= HEAD_DELAY_MS + BODY_DELAY_MS - 5, 'the body came after both delays');
      // Timers never fire early, so the head came at least HEAD_DELAY_MS after the request was sent.
      assert.ok(got.rttMs >= HEAD_DELAY_MS - 1 && got.rttMs < HEAD_DELAY_MS + BODY_DELAY_MS, `rtt ${got.rttMs} ms`);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('a malformed answer and one cut short are retryable failures that say so', async () => {
    const table: Array<[string, RegExp]> = [
      [
        'HTTP/1.1 2OO OK\r\nContent-Length: 0\r\n\r\n',
        /^malformed HTTP answer: a status code that is not three digits$/,
      ],
      ['HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc', /^connection reset by the origin$/],
    ];
    for (const [bytes, reason] of table) {
      const server = await rawServer((socket) => socket.end(bytes));
      try {
        const got = await transport.send(request(server.port));
        assert.ok(!isProbeResponse(got));
        assert.match(got.failure_reason, reason);
        assert.equal(got.retryable, true);
      } finally {
        await server.close();
      }
    }
  });

  it('a Location sent twice is not followed (the 3xx is judged as it is), one that is not a URL fails the check', async () => {
    const table: Array<[string, string]> = [
      ['Location: /a\r\nLocation: /b', 'HTTP 302, expected 200'],
      ['Location: http://[', 'HTTP 302 with a Location that is not a URL'],
    ];
    for (const [locations, reason] of table) {
      const server = await rawServer((socket) =>
        socket.write(`HTTP/1.1 302 Found\r\n${locations}\r\nContent-Length: 0\r\n\r\n`),
      );
      try {
        const check = await checkOrigin(
          transport,
          origin(`http://127.0.0.1:${server.port}`),
          withMonitorDefaults({ type: 'http', follow_redirects: true, retries: 0 }),
          [],
        );
        assert.equal(check.failure_reason, reason);
      } finally {
        await server.close();
      }
    }
  });

  it('a read that meets a keep-alive socket the origin just dropped goes again on a fresh one; other requests fail', async () => {
    // Every connection answers its first request and drops the second unanswered, as an origin closing
    // an idle socket just as the probe writes to it.
    const server = await rawServer((socket, { count }) => {
      if (count === 0) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      else socket.destroy();
    });
    try {
      const first = await transport.send(request(server.port));
      assert.ok(isProbeResponse(first));
      const replayed = await transport.send(request(server.port));
      assert.ok(isProbeResponse(replayed), JSON.stringify(replayed));
      assert.equal(server.sockets.length, 2);
      const notReplayed = await transport.send(request(server.port, { method: 'POST', body: 'x', replayable: false }));
      assert.ok(!isProbeResponse(notReplayed));
      assert.equal(notReplayed.failure_reason, 'connection reset by the origin');
    } finally {
      await server.close();
    }
  });

  it('CONNECT (refused by the monitor schema, possible in an older row) fails at once and sends nothing', async () => {
    const server = await rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\n\r\n'));
    try {
      const got = await transport.send(request(server.port, { method: 'CONNECT' }));
      assert.ok(!isProbeResponse(got));
      assert.deepEqual(
        [got.failure_reason, got.retryable],
        ['request failed: CONNECT is not a check method', undefined],
      );
      assert.equal(server.sockets.length, 0);
    } finally {
      await server.close();
    }
  });

  it('probes to one destination run side by side on up to 32 sockets, so a round of 32 origins on one host does not queue', async () => {
    // The server holds every answer until 32 requests are open at once: with fewer sockets it never
    // answers and the probes time out.
    const open: Array<() => void> = [];
    const sockets = new Set<unknown>();
    let released = false;
    const { server, port } = await httpServer((req, res) => {
      sockets.add(req.socket);
      const answer = () => res.end('ok');
      if (released) return answer();
      open.push(answer);
      if (open.length === 32) {
        released = true;
        for (const send of open.splice(0)) send();
      }
    });
    const own = new ProbeTransport({ outbound: new OutboundPolicy({ trustedAccounts: [] }), clock: systemClock });
    try {
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          own.send(request(port, { url: new URL(`http://127.0.0.1:${port}/o/${i}`), timeoutMs: 10_000 })),
        ),
      );
      assert.deepEqual(
        results.map((got) => (isProbeResponse(got) ? got.status : got.failure_reason)),
        Array.from({ length: 40 }, () => 200),
      );
      assert.equal(sockets.size, 32, 'the 8 probes past 32 reuse sockets');
    } finally {
      await own.close();
      server.closeAllConnections();
      server.close();
    }
  });

  it('pools left without connections are dropped by the sweep; a closed transport sends nothing', async () => {
    const own = new ProbeTransport({ outbound: new OutboundPolicy({ trustedAccounts: [] }), clock: systemClock });
    const server = await rawServer((socket) =>
      socket.write('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok'),
    );
    try {
      const tenant = own.forAccount('acct-1');
      const got = await own.send(request(server.port));
      assert.ok(isProbeResponse(got));
      assert.equal(own.pools.size, 1);
      assert.equal(tenant.pools, own.pools, 'views share the pools');
      own.pools.dropEmpty();
      assert.equal(own.pools.size, 0);
      await own.close();
      const refused = await own.send(request(server.port));
      assert.ok(!isProbeResponse(refused));
      assert.equal(refused.failure_reason, 'request failed: the probe transport was closed');
      assert.equal(server.sockets.length, 1);
    } finally {
      await own.close();
      await server.close();
    }
  });
});
