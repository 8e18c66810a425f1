/**
 * origins[].ws_address (SPEC §9: the origin's newHeads push endpoint; §8: ws/wss through the one outbound
 * policy), through the official Cloudflare SDK and the config file:
 * - optional (absent: not shown), canonical ws(s):// form, round-trips on POST, GET, list, PATCH and PUT;
 * - shown masked exactly as `address` when it carries a key; `***` sent back keeps the stored secret only
 *   while scheme, host and port are unchanged (400 / 1002 "re-enter the secret" otherwise, nothing stored);
 * - http(s)://, a bare host[:port] and anything else the address model refuses is 400 / 1002 naming
 *   `origins.N.ws_address`; so is a loopback/private target for an account not in trusted_accounts;
 * - the config file seeds it (canonical, shown masked) and refuses the same forms as CONFIG_INVALID.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Cloudflare from 'cloudflare';
import { buildConfig } from '../../src/config/load.js';
import { isSwitchyardError } from '../../src/errors/base.js';
import { getPool } from '../../src/pools/pool-queries.js';
import { type ApiFixture, OTHER_ACCOUNT, startApiFixture } from './setup.js';

type OriginParam = Cloudflare.LoadBalancers.PoolCreateParams['origins'][number];
type ShownOrigin = { name: string; address: string; ws_address?: string };

const KEY = '0123456789abcdef0123456789abcdef';
const SECRET_WS = `WSS://rpc.example:443/ws/v3/${KEY}?apikey=K1&chain=1`;
const CANONICAL_WS = `wss://rpc.example/ws/v3/${KEY}?apikey=K1&chain=1`;
const MASKED_WS = 'wss://rpc.example/ws/v3/***?apikey=***&chain=***';
const RE_ENTER = /re-enter the secret for the new destination/;

/** The SDK's OriginParam does not name `ws_address`; it sends the body as given. */
const origin = (name: string, ws_address?: unknown) =>
  ({
    name,
    address: 'https://rpc.example/v3/k',
    ...(ws_address === undefined ? {} : { ws_address }),
  }) as OriginParam;
const wsOf = (pool: { origins?: unknown[] }) =>
  (pool.origins ?? []).map((o) => [(o as ShownOrigin).name, (o as ShownOrigin).ws_address]);

/** The SDK call is a 400 with code 1002 whose message matches `message`. */
async function refused(call: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(call, (err: unknown) => {
    assert.ok(err instanceof Cloudflare.BadRequestError, String(err));
    const first = (err.errors as { code: number; message: string }[])[0];
    assert.equal(first?.code, 1002, JSON.stringify(err.errors));
    assert.match(first?.message ?? '', message);
    return true;
  });
}

describe('origins[].ws_address', () => {
  let f: ApiFixture;
  before(async () => {
    f = await startApiFixture();
  });
  after(() => f?.close());

  const stored = async (id: string) => {
    const pool = await getPool(f.app.store.db, f.app.secrets, f.accountId, id);
    assert.ok(pool);
    return pool.origins.map((o) => [o.name, o.ws_address]);
  };

  test('optional; canonical and masked like address; round-trips on POST, GET, list, PATCH and PUT', async () => {
    const account_id = f.accountId;
    const created = await f.sdk.loadBalancers.pools.create({
      account_id,
      name: 'ws-pool',
      origins: [origin('pushed', SECRET_WS), origin('polled')],
    });
    const expected = [
      ['pushed', MASKED_WS],
      ['polled', undefined],
    ];
    assert.deepEqual(wsOf(created), expected, 'shown masked; absent when not set');
    assert.ok(!('ws_address' in ((created.origins?.[1] as object) ?? {})), 'no ws_address key when absent');
    const id = created.id as string;
    assert.deepEqual(await stored(id), [
      ['pushed', CANONICAL_WS],
      ['polled', undefined],
    ]);
    const got = await f.sdk.loadBalancers.pools.get(id, { account_id });
    assert.deepEqual(wsOf(got), expected);
    const listed = await f.sdk.loadBalancers.pools.list({ account_id });
    assert.deepEqual(wsOf(listed.result.find((p) => p.id === id) ?? {}), expected);
    for (const text of [JSON.stringify(created), JSON.stringify(got), JSON.stringify(listed.result)]) {
      for (const secret of [KEY, 'K1']) assert.ok(!text.includes(secret), `${secret} shown`);
    }

    const patchedOther = await f.sdk.loadBalancers.pools.edit(id, { account_id, description: 'kept' });
    assert.deepEqual(wsOf(patchedOther), expected, 'PATCH of another field keeps ws_address');
    assert.deepEqual(await stored(id), [
      ['pushed', CANONICAL_WS],
      ['polled', undefined],
    ]);

    // A pool fetched with GET can be sent back with PUT as it is: the masked ws_address keeps its secrets.
    const replaced = await f.sdk.loadBalancers.pools.update(id, {
      account_id,
      name: got.name as string,
      origins: got.origins as OriginParam[],
    });
    assert.deepEqual(wsOf(replaced), expected);
    assert.deepEqual(await stored(id), [
      ['pushed', CANONICAL_WS],
      ['polled', undefined],
    ]);

    // The same destination with *** and a changed non-secret part: the stored key is kept.
    const patched = await f.sdk.loadBalancers.pools.edit(id, {
      account_id,
      origins: [
        origin('pushed', 'wss://rpc.example:443/ws/v3/***?apikey=***&chain=2'),
        origin('polled', 'ws://rpc.example:8546'),
      ],
    });
    assert.deepEqual(wsOf(patched), [
      ['pushed', 'wss://rpc.example/ws/v3/***?apikey=***&chain=***'],
      ['polled', 'ws://rpc.example:8546'],
    ]);
    assert.deepEqual(await stored(id), [
      ['pushed', `wss://rpc.example/ws/v3/${KEY}?apikey=K1&chain=2`],
      ['polled', 'ws://rpc.example:8546'],
    ]);

    const reset = await f.sdk.loadBalancers.pools.update(id, {
      account_id,
      name: 'ws-pool',
      origins: [origin('pushed'), origin('polled')],
    });
    assert.deepEqual(
      wsOf(reset),
      [
        ['pushed', undefined],
        ['polled', undefined],
      ],
      'PUT without ws_address removes it',
    );
    assert.deepEqual(await stored(id), [
      ['pushed', undefined],
      ['polled', undefined],
    ]);
    await f.sdk.loadBalancers.pools.delete(id, { account_id });
  });

  test('*** for another destination is 400 / 1002 "re-enter the secret"; standing for nothing, 400; nothing stored', async () => {
    const account_id = f.accountId;
    const created = await f.sdk.loadBalancers.pools.create({
      account_id,
      name: 'ws-secret',
      origins: [origin('a', SECRET_WS)],
    });
    const id = created.id as string;
    const before = await stored(id);
    const elsewhere = [
      'wss://evil.example/ws/v3/***?apikey=***&chain=1', // new host
      'wss://rpc.example:8443/ws/v3/***?apikey=***&chain=1', // new port
      'ws://rpc.example/ws/v3/***?apikey=***&chain=1', // new scheme (ws, port 80)
    ];
    for (const ws of elsewhere) {
      const message = /^origins\.0\.ws_address: the scheme, host or port differs from the stored ws_address/;
      await refused(f.sdk.loadBalancers.pools.edit(id, { account_id, origins: [origin('a', ws)] }), message);
      await refused(
        f.sdk.loadBalancers.pools.update(id, { account_id, name: 'ws-secret', origins: [origin('a', ws)] }),
        RE_ENTER,
      );
    }
    // An origin without a stored ws_address has no secret for *** to stand for.
    await refused(
      f.sdk.loadBalancers.pools.edit(id, { account_id, origins: [origin('a', SECRET_WS), origin('b', MASKED_WS)] }),
      /^origins\.1\.ws_address: contains a masked secret \(\*\*\*\) that stands for nothing stored/,
    );
    assert.deepEqual(await stored(id), before);

    // Re-entered in full, the new destination is accepted.
    await f.sdk.loadBalancers.pools.edit(id, { account_id, origins: [origin('a', 'wss://other.example/ws?key=NEW')] });
    assert.deepEqual(await stored(id), [['a', 'wss://other.example/ws?key=NEW']]);
    await f.sdk.loadBalancers.pools.delete(id, { account_id });
  });

  test('only ws:// and wss:// (no http, no bare host, no fragment), each a 400 / 1002 naming the field', async () => {
    const account_id = f.accountId;
    const cases: Array<[unknown, RegExp]> = [
      ['http://rpc.example:8545', /^origins\.0\.ws_address: the scheme must be ws or wss$/],
      ['https://rpc.example/ws', /^origins\.0\.ws_address: the scheme must be ws or wss$/],
      ['rpc.example:8546', /^origins\.0\.ws_address: must start with ws or wss:\/\/$/],
      ['wss://rpc.example/ws#frag', /^origins\.0\.ws_address: a fragment/],
      ['wss://rpc.example/a b', /^origins\.0\.ws_address: must not contain control characters/],
      ['', /^origins\.0\.ws_address: /],
      [null, /^origins\.0\.ws_address: /],
      [8546, /^origins\.0\.ws_address: /],
    ];
    for (const [ws, message] of cases) {
      await refused(
        f.sdk.loadBalancers.pools.create({ account_id, name: 'ws-bad', origins: [origin('a', ws)] }),
        message,
      );
    }
    const list = await f.sdk.loadBalancers.pools.list({ account_id });
    assert.ok(!list.result.some((p) => p.name === 'ws-bad'), 'nothing created');
  });

  test('the outbound policy: an untrusted account may not push from loopback/private/metadata; the routing account may use loopback', async () => {
    const tenant = new Cloudflare({ apiToken: f.otherToken, baseURL: f.app.apiUrl, maxRetries: 0 });
    const account_id = OTHER_ACCOUNT;
    const ok = await tenant.loadBalancers.pools.create({
      account_id,
      name: 'tenant-ws',
      origins: [origin('a', 'wss://rpc.example/ws')],
    });
    const id = ok.id as string;
    for (const ws of [
      'ws://127.0.0.1:8546',
      'ws://10.0.0.5:8546/',
      'wss://192.168.1.10/ws',
      'ws://localhost:8546',
      'ws://[::1]:8546',
    ]) {
      const message =
        /^origins\.1\.ws_address: target not allowed: .*allowed only for accounts in outbound\.trusted_accounts/;
      const origins = [origin('a', 'wss://rpc.example/ws'), origin('b', ws)];
      await refused(tenant.loadBalancers.pools.create({ account_id, name: 'tenant-ws-2', origins }), message);
      await refused(tenant.loadBalancers.pools.edit(id, { account_id, origins }), message);
      await refused(tenant.loadBalancers.pools.update(id, { account_id, name: 'tenant-ws', origins }), message);
    }
    await refused(
      tenant.loadBalancers.pools.edit(id, { account_id, origins: [origin('a', 'ws://169.254.169.254/')] }),
      /^origins\.0\.ws_address: target not allowed: .*always refused/,
    );
    const kept = await tenant.loadBalancers.pools.get(id, { account_id });
    assert.deepEqual(wsOf(kept), [['a', 'wss://rpc.example/ws']], 'nothing changed');

    // The routing account is trusted: loopback is allowed, link-local never.
    const local = await f.sdk.loadBalancers.pools.create({
      account_id: f.accountId,
      name: 'local-ws',
      origins: [origin('a', 'ws://127.0.0.1:8546')],
    });
    assert.deepEqual(wsOf(local), [['a', 'ws://127.0.0.1:8546']]);
    await refused(
      f.sdk.loadBalancers.pools.edit(local.id as string, {
        account_id: f.accountId,
        origins: [origin('a', 'ws://169.254.169.254/')],
      }),
      /^origins\.0\.ws_address: target not allowed: .*always refused/,
    );
  });

  test('from the config file: seeded canonical and shown masked; bad forms and refused targets are CONFIG_INVALID', async () => {
    const origins = [
      { name: 'pushed', address: 'http://127.0.0.1:1', ws_address: `ws://127.0.0.1:2/ws/${KEY}` },
      { name: 'polled', address: 'http://127.0.0.1:3' },
    ];
    const seeded = await startApiFixture({ pools: [{ name: 'from-config', origins }] });
    try {
      const [pool] = (await seeded.sdk.loadBalancers.pools.list({ account_id: seeded.accountId })).result.filter(
        (p) => p.name === 'from-config',
      );
      assert.deepEqual(wsOf(pool ?? {}), [
        ['pushed', 'ws://127.0.0.1:2/ws/***'],
        ['polled', undefined],
      ]);
      const row = await getPool(seeded.app.store.db, seeded.app.secrets, seeded.accountId, pool?.id as string);
      assert.equal(row?.origins[0]?.ws_address, `ws://127.0.0.1:2/ws/${KEY}`);
    } finally {
      await seeded.close();
    }
    const load = (ws: string) => () =>
      buildConfig({ pools: [{ name: 'p', origins: [{ ...origins[0], ws_address: ws }] }] }, 'switchyard.yaml');
    const cases: Array<[() => unknown, RegExp]> = [
      [load('http://127.0.0.1:2'), /^switchyard\.yaml: pools\.0\.origins\.0\.ws_address: the scheme must be ws or wss/],
      [load('127.0.0.1:2'), /^switchyard\.yaml: pools\.0\.origins\.0\.ws_address: must start with ws or wss:\/\//],
      [
        load('ws://169.254.169.254/'),
        /^switchyard\.yaml: pools\.0\.origins\.0\.ws_address: target not allowed: .*always refused/,
      ],
    ];
    for (const [build, message] of cases) {
      assert.throws(build, (err: unknown) => {
        assert.ok(isSwitchyardError(err) && err.code === 'CONFIG_INVALID', String(err));
        assert.match(err.message, message);
        return true;
      });
    }
  });
});
