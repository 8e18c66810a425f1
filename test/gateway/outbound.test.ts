/**
 * The outbound target policy on the gateway's origin connects (SPEC §8): every connect checks a
 * literal IP before any socket is opened and every address a name resolves to (a name rebound to a
 * refused address between the configuration check and the connect is refused); a refusal is a connect
 * failure whose reason says "target not allowed". Origins are real node:http servers on free ports;
 * DNS answers come from a resolver the test controls.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { exchange, OriginClients } from '../../src/gateway/upstream/origin-clients.js';
import { BufferPool } from '../../src/http1/index.js';
import { OutboundPolicy, type Resolver } from '../../src/outbound/policy.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { fromChainTracker, rpc, startHttpServer, type TestServer } from '../helpers/http.js';
import { countingServer } from '../http1/servers.js';
import { originOf } from './origin-fixture.js';

const ROUTING = 'a'.repeat(32);

/** DNS whose answers a test changes as it goes. */
const answers: Record<string, string[]> = {};
const resolve: Resolver = async (hostname) => {
  const found = answers[hostname];
  if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
};

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function clients(trusted: readonly string[]): OriginClients {
  const policy = new OutboundPolicy({ trustedAccounts: trusted, resolve });
  const made = new OriginClients({
    connectionsPerOrigin: 2,
    connectTimeoutMs: 2_000,
    guard: policy.connectGuard(policy.rulesFor(ROUTING)),
    buffers: new BufferPool(),
  });
  cleanups.push(() => made.close());
  return made;
}

describe('origin connects and the outbound policy', () => {
  it('literal IPs the account may not reach are refused before any socket is opened', async () => {
    const server = await countingServer();
    cleanups.push(() => server.close());
    const port = new URL(server.url).port;
    const untrusted = clients([]);
    for (const address of [`http://127.0.0.1:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`]) {
      const pending = exchange(untrusted.target(originOf(address)), Buffer.from('{}'), 2_000);
      await assert.rejects(pending.response, (err: NodeJS.ErrnoException) => {
        assert.equal(err.code, 'ETARGETREFUSED');
        assert.match(
          err.message,
          /^target not allowed: .*loopback address \(allowed only for accounts in outbound\.trusted_accounts\)/,
        );
        return true;
      });
    }
    assert.equal(server.connections, 0, 'no connection reached the origin');
    const trusted = clients([ROUTING]);
    const res = await exchange(trusted.target(originOf(`http://127.0.0.1:${port}/`)), Buffer.from('{}'), 2_000)
      .response;
    assert.equal(res.status, 200);
  });

  it('every connect checks what the name resolves to now (DNS rebinding)', async () => {
    const server = await countingServer();
    cleanups.push(() => server.close());
    const port = new URL(server.url).port;
    const untrusted = clients([]);
    const target = untrusted.target(originOf(`http://rebind.example:${port}/`));
    answers['rebind.example'] = ['127.0.0.1'];
    await assert.rejects(exchange(target, Buffer.from('{}'), 2_000).response, {
      code: 'ETARGETREFUSED',
      message: /^target not allowed: rebind\.example resolves to 127\.0\.0\.1, a loopback address/,
    });
    answers['rebind.example'] = ['93.184.216.34', '169.254.169.254'];
    await assert.rejects(exchange(target, Buffer.from('{}'), 2_000).response, {
      code: 'ETARGETREFUSED',
      message: /resolves to 169\.254\.169\.254, a link-local address \(always refused\)/,
    });
    assert.equal(server.connections, 0);
  });
});

describe('the gateway: a refused origin connect is a connect failure that says why', () => {
  let origin: TestServer;
  const start = async (raw: Record<string, unknown>): Promise<TestApp> => {
    const app = await startApp(
      {
        account_id: ROUTING,
        networks: { sepolia: { chain_id: 11_155_111, pools: ['named'] } },
        pools: [{ name: 'named', origins: [{ name: 'n', address: `http://node.internal.example:${origin.port}` }] }],
        ...raw,
      },
      { resolve },
    );
    cleanups.push(() => app.close());
    return app;
  };

  it('trusted routing account: the name resolving to loopback is served; with trusted_accounts [] it is refused', async () => {
    origin = await startHttpServer((_req, res, body) => {
      const id = (JSON.parse(body) as { id?: unknown }).id;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x10' }));
    });
    cleanups.push(() => origin.close());
    answers['node.internal.example'] = ['127.0.0.1'];

    const trusted = await start({});
    const ok = await rpc(trusted.rpcUrl(), 'eth_blockNumber');
    assert.equal(ok.answer.result, '0x10');
    // The trusted gateway's chain tracker keeps polling the origin: count client calls only.
    const calls = () => origin.received.filter((r) => !fromChainTracker(r.body)).length;
    const served = calls();

    const locked = await start({ outbound: { trusted_accounts: [] } });
    const refused = await rpc(locked.rpcUrl(), 'eth_blockNumber');
    assert.equal(refused.status, 502, refused.text);
    assert.match(
      refused.answer.error?.message ?? '',
      /named\/n: cannot connect \(target not allowed: node\.internal\.example resolves to 127\.0\.0\.1, a loopback address/,
    );
    assert.equal(calls(), served, 'the refused gateway never reached the origin');
  });
});
