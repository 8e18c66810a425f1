// SPEC §8, the outbound target policy through the API: a tenant (an account not in
// outbound.trusted_accounts) cannot point origins or webhooks at loopback, private, link-local or
// metadata targets in any spelling (400 / 1002 naming the field, nothing changed), the routing account
// may use loopback but never link-local or metadata, and what passes the URL check is checked again at
// connect time — on every redirect hop and every resolved address — so a probe that would reach a
// refused target is a failed check whose reason says "target not allowed".
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Resolver } from '../../src/outbound/policy.js';
import { type ApiFixture, OTHER_ACCOUNT, startApiFixture } from './setup.js';

/** Names this test's DNS answers; anything else does not resolve. */
const DNS: Record<string, string[]> = {
  'rpc.tenant.example': ['127.0.0.1'], // a name that passes the URL check and resolves to loopback
  'meta-alias.example': ['93.184.216.34', '169.254.169.254'], // one public, one link-local answer
  'hooks.tenant.example': ['127.0.0.1'],
};
const resolve: Resolver = async (hostname) => {
  const found = DNS[hostname];
  if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
};

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as { port: number }).port;
}

describe('outbound target policy', () => {
  let f: ApiFixture;
  /** An "internal service": nothing a tenant configures may reach it. */
  let internalHits = 0;
  let internal: Server;
  let internalPort = 0;
  const redirectors: Server[] = [];

  before(async () => {
    f = await startApiFixture({}, { resolve });
    internal = createServer((req, res) => {
      internalHits += 1;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":"0x1"}');
    });
    internalPort = await listen(internal);
  });
  after(async () => {
    for (const server of [internal, ...redirectors]) server.close();
    await f.close();
  });

  const pools = (account: string) => `/accounts/${account}/load_balancers/pools`;
  const tenant = { token: () => f.otherToken, account: OTHER_ACCOUNT };

  /** The account's pools as the API lists them (name → origin addresses). */
  const snapshot = async (token: string, account: string) => {
    const res = await f.call('GET', `${pools(account)}?per_page=1000`, { token });
    return JSON.stringify(res.body.result);
  };

  test('a tenant cannot create or change a pool to reach local, link-local or metadata targets', async () => {
    const refused = [
      `http://127.0.0.1:${internalPort}`,
      `127.0.0.1:${internalPort}`,
      'http://[::1]/',
      'http://169.254.169.254/latest/meta-data/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://0.0.0.0/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:7f00:1]/',
      'http://[64:ff9b::7f00:1]/',
      'http://[2002:7f00:1::]/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://localhost:8545/',
      'http://10.0.0.5:8545/',
      'http://192.168.1.10/',
      'http://100.64.0.1/',
      'http://[fd00::1]/',
      'http://user:hunter2@127.0.0.1/v3/SECRETKEY?apikey=SECRETQ',
    ];
    const before = await snapshot(tenant.token(), tenant.account);
    for (const address of refused) {
      const res = await f.call('POST', pools(tenant.account), {
        token: tenant.token(),
        body: {
          name: 'evil',
          origins: [
            { name: 'ok', address: 'https://rpc.example.com/' },
            { name: 'o', address },
          ],
        },
      });
      assert.equal(res.status, 400, address);
      assert.equal(res.body.errors[0]?.code, 1002, address);
      const message = res.body.errors[0]?.message ?? '';
      assert.match(message, /^origins\.1\.address: target not allowed: /, address);
      assert.doesNotMatch(message, /hunter2|SECRET/, 'the refusal never echoes credentials, path or query');
    }
    assert.equal(await snapshot(tenant.token(), tenant.account), before, 'no refused create changed anything');

    // An allowed pool, then PUT and PATCH that try to move its origin somewhere refused.
    const made = await f.call('POST', pools(tenant.account), {
      token: tenant.token(),
      body: { name: 'tenant-pool', origins: [{ name: 'o', address: 'https://rpc.example.com/' }] },
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const id = (made.body.result as { id: string }).id;
    const stored = await snapshot(tenant.token(), tenant.account);
    for (const method of ['PUT', 'PATCH']) {
      for (const address of ['http://[::1]:8545/', 'http://169.254.169.254/']) {
        const res = await f.call(method, `${pools(tenant.account)}/${id}`, {
          token: tenant.token(),
          body: { name: 'tenant-pool', origins: [{ name: 'o', address }] },
        });
        assert.equal(res.status, 400, `${method} ${address}`);
        assert.match(res.body.errors[0]?.message ?? '', /^origins\.0\.address: target not allowed: /);
      }
    }
    assert.equal(await snapshot(tenant.token(), tenant.account), stored, 'no refused change changed anything');
  });

  test('the routing account may use loopback and private origins, never link-local or metadata', async () => {
    const ok = await f.call('POST', pools(f.accountId), {
      body: {
        name: 'local',
        origins: [
          { name: 'a', address: `http://127.0.0.1:${internalPort}` },
          { name: 'b', address: 'http://[::1]:8545/' },
          { name: 'c', address: '10.0.0.5:8545' },
        ],
      },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const before = await snapshot(f.token, f.accountId);
    for (const address of [
      'http://169.254.169.254/',
      'http://[fe80::1]/',
      'http://metadata.google.internal/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://100.100.100.200/',
      'http://0.0.0.0:8545/',
      'http://224.0.0.1/',
      'http://255.255.255.255/',
    ]) {
      const res = await f.call('POST', pools(f.accountId), {
        body: { name: 'meta', origins: [{ name: 'o', address }] },
      });
      assert.equal(res.status, 400, address);
      assert.match(
        res.body.errors[0]?.message ?? '',
        /^origins\.0\.address: target not allowed: .*always refused/,
        address,
      );
    }
    assert.equal(await snapshot(f.token, f.accountId), before);
  });

  test('webhooks: a tenant cannot target local addresses; the routing account can, never metadata', async () => {
    let received = 0;
    const receiver = createServer((req, res) => {
      received += 1;
      req.resume();
      res.end('ok');
    });
    const port = await listen(receiver);
    redirectors.push(receiver);
    const hooks = (account: string) => `/accounts/${account}/alerting/v3/destinations/webhooks`;
    const list = async (token: string, account: string) =>
      JSON.stringify((await f.call('GET', hooks(account), { token })).body.result);

    const before = await list(tenant.token(), tenant.account);
    for (const url of [
      `http://127.0.0.1:${port}/hook`,
      `http://[::ffff:127.0.0.1]:${port}/hook`,
      `http://localhost:${port}/hook`,
      `http://hooks.tenant.example:${port}/hook`, // a name resolving to loopback
      'http://169.254.169.254/',
    ]) {
      const res = await f.call('POST', hooks(tenant.account), {
        token: tenant.token(),
        body: { name: 'h', url },
      });
      assert.equal(res.status, 400, url);
      assert.equal(res.body.errors[0]?.code, 1002, url);
      assert.match(res.body.errors[0]?.message ?? '', /^url: target not allowed: /, url);
    }
    assert.equal(await list(tenant.token(), tenant.account), before);
    assert.equal(received, 0, 'no test message reached the local receiver');

    const own = await f.call('POST', hooks(f.accountId), { body: { name: 'h', url: `http://127.0.0.1:${port}/hook` } });
    assert.equal(own.status, 201, JSON.stringify(own.body));
    assert.equal(received, 1);
    const meta = await f.call('POST', hooks(f.accountId), { body: { name: 'm', url: 'http://metadata.goog/' } });
    assert.equal(meta.status, 400);
    assert.match(meta.body.errors[0]?.message ?? '', /^url: target not allowed: .*cloud metadata/);
  });

  /** Waits (bounded) until every named origin of the pool reports a failure reason matching `pattern`. */
  const waitForReasons = async (token: string, account: string, id: string, count: number, pattern: RegExp) => {
    const deadline = Date.now() + 15_000;
    let reasons: string[] = [];
    while (Date.now() < deadline) {
      const res = await f.call('GET', `${pools(account)}/${id}/health`, { token });
      const pop = (
        res.body.result as { pop_health: Record<string, { origins: Record<string, { failure_reason: string }>[] }> }
      ).pop_health;
      reasons = Object.values(pop).flatMap((region) =>
        region.origins.flatMap((entry) => Object.values(entry).map((origin) => origin.failure_reason)),
      );
      if (reasons.length === count && reasons.every((reason) => pattern.test(reason))) return reasons;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`health reasons never all matched ${pattern}: ${JSON.stringify(reasons)}`);
  };

  test('a tenant origin whose name resolves to loopback at probe time: failed check, "target not allowed"', async () => {
    const monitor = await f.call('POST', `/accounts/${tenant.account}/load_balancers/monitors`, {
      token: tenant.token(),
      body: { type: 'http', interval: 1, timeout: 2, retries: 0, path: '/', expected_codes: '200' },
    });
    assert.equal(monitor.status, 200, JSON.stringify(monitor.body));
    const hitsBefore = internalHits;
    // The URL check passes (a name); the probe's connect-time lookup sees 127.0.0.1 and refuses.
    const pool = await f.call('POST', pools(tenant.account), {
      token: tenant.token(),
      body: {
        name: 'rebind',
        origins: [{ name: 'o', address: `http://rpc.tenant.example:${internalPort}/` }],
        monitor: (monitor.body.result as { id: string }).id,
      },
    });
    assert.equal(pool.status, 200, JSON.stringify(pool.body));
    const [reason] = await waitForReasons(
      tenant.token(),
      tenant.account,
      (pool.body.result as { id: string }).id,
      1,
      /target not allowed/,
    );
    assert.match(
      reason ?? '',
      /^target not allowed: rpc\.tenant\.example resolves to 127\.0\.0\.1, a loopback address \(allowed only for accounts in outbound\.trusted_accounts\)/,
    );
    assert.equal(internalHits, hitsBefore, 'the internal service was never reached');
  });

  test('every redirect hop is checked: redirects to metadata and link-local targets are failed checks', async () => {
    const redirectTo = async (location: string) => {
      const server = createServer((req, res) => {
        req.resume();
        res.writeHead(302, { location }).end();
      });
      redirectors.push(server);
      return listen(server);
    };
    const targets = [
      'http://169.254.169.254/latest/meta-data/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://[::ffff:169.254.169.254]/',
      'http://meta-alias.example/', // passes the URL check; refused at connect (one answer is link-local)
    ];
    const ports = await Promise.all(targets.map(redirectTo));
    // A control: a redirect to an allowed (loopback, trusted account) target still works.
    const allowedPort = await redirectTo(`http://127.0.0.1:${internalPort}/`);
    const monitor = await f.call('POST', `/accounts/${f.accountId}/load_balancers/monitors`, {
      body: { type: 'http', interval: 1, timeout: 2, retries: 0, follow_redirects: true, expected_codes: '200' },
    });
    assert.equal(monitor.status, 200, JSON.stringify(monitor.body));
    const monitorId = (monitor.body.result as { id: string }).id;
    const pool = await f.call('POST', pools(f.accountId), {
      body: {
        name: 'redirects',
        origins: ports.map((port, i) => ({ name: `r${i}`, address: `http://127.0.0.1:${port}` })),
        monitor: monitorId,
      },
    });
    assert.equal(pool.status, 200, JSON.stringify(pool.body));
    const reasons = await waitForReasons(
      f.token,
      f.accountId,
      (pool.body.result as { id: string }).id,
      targets.length,
      /^target not allowed: /,
    );
    assert.ok(reasons.some((r) => /host 169\.254\.169\.254 is a link-local address \(always refused\)/.test(r)));
    assert.ok(reasons.some((r) => /metadata\.google\.internal is a cloud metadata service/.test(r)));
    assert.ok(reasons.some((r) => /IPv6 form of 169\.254\.169\.254/.test(r)));
    assert.ok(
      reasons.some((r) => /meta-alias\.example resolves to 169\.254\.169\.254/.test(r)),
      reasons.join('\n'),
    );

    const control = await f.call('POST', pools(f.accountId), {
      body: {
        name: 'redirect-ok',
        origins: [{ name: 'ok', address: `http://127.0.0.1:${allowedPort}` }],
        monitor: monitorId,
      },
    });
    assert.equal(control.status, 200);
    await waitForReasons(f.token, f.accountId, (control.body.result as { id: string }).id, 1, /^No failures$/);
  });
});
