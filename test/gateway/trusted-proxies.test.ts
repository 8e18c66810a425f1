/**
 * `gateway.trusted_proxies` through the real listener, against a real anvil origin: the client address
 * of Forwarded / X-Forwarded-For keys the rate limit (`gateway.rate_limit`, an injected clock that does
 * not move, so buckets never refill) and the WebSocket connections per client — but only when the TCP
 * peer is a trusted proxy. The "proxy" is this test connecting from 127.0.0.2 (trusted); 127.0.0.1 is an
 * untrusted peer whose forwarding headers are ignored. Both reach the listener on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { ManualClock } from '../../src/clock.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { waitFor } from '../http1/servers.js';
import { callOn, idleConnection } from './starvation-fixtures.js';

const PROXY = '127.0.0.2';
const DIRECT = '127.0.0.1';
const CALL = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
/** requests_per_second 1, burst 2: each client gets two calls while the clock stands still. */
const BURST = 2;
/** gateway.max_connections_per_client: TCP connections per peer, which a trusted proxy is exempt from. */
const PER_PEER = 4;

let node: AnvilNode;
let app: TestApp;
const clock = new ManualClock('2026-01-01T00:00:00Z');

before(async () => {
  node = await startTestAnvil();
  app = await startApp(
    {
      networks: { sepolia: { chain_id: 11155111, pools: ['main'] } },
      pools: [poolOf('main', [node.url])],
      gateway: {
        trusted_proxies: [`${PROXY}/32`, 'fd00::/8'],
        rate_limit: { requests_per_second: 1, burst: BURST },
        websocket: { max_connections_per_client: 1 },
        max_connections_per_client: PER_PEER,
      },
    },
    { clock },
  );
});
after(async () => {
  await app?.close();
  await node?.stop();
});

/** The status of one call from `localAddress`, with these headers (string[]: one field line each). */
function status(localAddress: string, headers: Record<string, string | string[]> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(app.rpcUrl(), {
      method: 'POST',
      localAddress,
      agent: false,
      headers: { 'content-type': 'application/json', ...headers },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(CALL);
  });
}

/** Statuses of `n` calls in a row. */
async function statuses(n: number, from: string, headers: Record<string, string | string[]> = {}) {
  const out: number[] = [];
  for (let i = 0; i < n; i += 1) out.push(await status(from, headers));
  return out;
}

describe('rate limit per client address', () => {
  it('from a trusted proxy, each forwarded client has its own bucket', async () => {
    assert.deepEqual(await statuses(3, PROXY, { 'x-forwarded-for': '198.51.100.7, 203.0.113.1' }), [200, 200, 429]);
    // Another client behind the same proxy is not limited by the first one's calls.
    assert.deepEqual(await statuses(3, PROXY, { 'x-forwarded-for': '203.0.113.2' }), [200, 200, 429]);
    // The same client is the same bucket whatever the client itself prepended.
    assert.equal(await status(PROXY, { 'x-forwarded-for': 'forged, 203.0.113.1' }), 429);
  });

  it('Forwarded wins over X-Forwarded-For, and IPv6 clients are read from it', async () => {
    const both = { forwarded: 'for="[2001:db8::3]:4711";proto=http', 'x-forwarded-for': '203.0.113.1' };
    // 203.0.113.1 is spent; the call counts against 2001:db8::3 instead.
    assert.deepEqual(await statuses(3, PROXY, both), [200, 200, 429]);
    assert.equal(
      await status(PROXY, { forwarded: 'for="[2001:DB8:0::3]"' }),
      429,
      'the same address, spelled otherwise',
    );
  });

  it("a proxy that adds its own X-Forwarded-For line is not fooled by the client's line", async () => {
    // The client sends 203.0.113.9 (a fresh bucket) hoping to be counted as that; the proxy's own line,
    // added after, names the real client 203.0.113.2, whose bucket is spent.
    assert.equal(await status(PROXY, { 'x-forwarded-for': ['203.0.113.9', '203.0.113.2'] }), 429);
  });

  it('malformed forwarding headers from a trusted proxy count against the proxy itself', async () => {
    assert.deepEqual(await statuses(3, PROXY, { 'x-forwarded-for': 'not an address' }), [200, 200, 429]);
    assert.equal(await status(PROXY, { forwarded: 'for=unknown' }), 429);
    assert.equal(await status(PROXY), 429);
  });

  it('from an untrusted peer, forwarding headers are ignored: every spoofed address shares its bucket', async () => {
    const spoofed: Array<Record<string, string>> = [
      { 'x-forwarded-for': '192.0.2.1' },
      { 'x-forwarded-for': '192.0.2.2' },
      { forwarded: 'for=192.0.2.3' },
      {},
    ];
    const got: number[] = [];
    for (const headers of spoofed) got.push(await status(DIRECT, headers));
    assert.deepEqual(got, [200, 200, 429, 429]);
  });
});

describe('WebSocket connections per client address', () => {
  const wsUrl = () => `${app.rpcUrl().replace(/^http/, 'ws')}`;

  /** Opens a connection or resolves with the refusal's status. */
  function handshake(localAddress: string, headers: Record<string, string>) {
    return new Promise<{ ws?: WebSocket; status: number }>((resolve, reject) => {
      const ws = new WebSocket(wsUrl(), { localAddress, headers });
      ws.once('open', () => resolve({ ws, status: 101 }));
      ws.once('unexpected-response', (_req, res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0 });
      });
      ws.once('error', (err) => reject(err));
    });
  }

  const closeAll = async (sockets: Array<WebSocket | undefined>) => {
    await Promise.all(
      sockets.map(
        (ws) =>
          ws &&
          new Promise<void>((resolve) => {
            ws.once('close', () => resolve());
            ws.close();
          }),
      ),
    );
  };

  it('behind a trusted proxy, clients are counted apart; the same client twice is refused (429)', async () => {
    clock.advance(60_000); // refill every bucket: a handshake costs one token
    const a = await handshake(PROXY, { 'x-forwarded-for': '203.0.113.50' });
    const b = await handshake(PROXY, { 'x-forwarded-for': '203.0.113.51' });
    const again = await handshake(PROXY, { forwarded: 'for=203.0.113.50' });
    try {
      assert.equal(a.status, 101);
      assert.equal(b.status, 101);
      assert.equal(again.status, 429);
    } finally {
      await closeAll([a.ws, b.ws, again.ws]);
    }
  });

  it('from an untrusted peer, a different X-Forwarded-For does not make another client', async () => {
    clock.advance(60_000);
    const first = await handshake(DIRECT, { 'x-forwarded-for': '203.0.113.60' });
    const second = await handshake(DIRECT, { 'x-forwarded-for': '203.0.113.61' });
    try {
      assert.equal(first.status, 101);
      assert.equal(second.status, 429);
    } finally {
      await closeAll([first.ws, second.ws]);
    }
  });
});

describe('max_connections_per_client behind a trusted proxy', () => {
  it("a trusted proxy's connections are not counted per peer; an untrusted peer's are", async () => {
    const proxied = Array.from({ length: PER_PEER + 2 }, () => idleConnection(app.gatewayUrl, PROXY));
    const direct = Array.from({ length: PER_PEER + 2 }, () => idleConnection(app.gatewayUrl, DIRECT));
    try {
      await waitFor(() => direct.filter((c) => c.closed).length === 2, 'the untrusted peer over its limit closed');
      // Every one of the proxy's connections is served (200, or 429 from the proxy's own rate-limit bucket).
      for (const c of proxied) assert.ok([200, 429].includes(await callOn(c.socket, app.rpcUrl(), CALL)));
      assert.equal(proxied.filter((c) => c.closed).length, 0);
      for (const c of direct.filter((d) => !d.closed)) {
        assert.ok([200, 429].includes(await callOn(c.socket, app.rpcUrl(), CALL)));
      }
    } finally {
      for (const c of [...proxied, ...direct]) c.socket.destroy();
    }
  });
});
