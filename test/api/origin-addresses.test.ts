/**
 * SPEC §8 "Origin addresses" and "Secrets stay bound to their destination", through the API:
 * - every refused address form is 400 / 1002 naming the field, and changes nothing (read back);
 * - accepted addresses are stored in their canonical form and shown masked, to read-only tokens too;
 * - `***` sent back keeps a stored secret (address parts, secret headers, webhook URL and secret) only
 *   while scheme, host and port are unchanged; a new destination with `***` is 400 "re-enter the secret
 *   for the new destination" and nothing changes; with the secret re-entered it is accepted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getDestinationTarget } from '../../src/notifications/queries/destinations.js';
import { getPool } from '../../src/pools/pool-queries.js';
import { type Receiver, startReceiver } from '../notifications/helpers.js';
import { type ApiFixture, startApiFixture } from './setup.js';

const KEY = '0123456789abcdef0123456789abcdef';
const SECRET_ADDRESS = `https://apiuser:PASS@rpc.example/v3/${KEY}?apikey=K1&chain=1`;
const MASKED_ADDRESS = 'https://***:***@rpc.example/v3/***?apikey=***&chain=***';
const HEADER = { Host: ['rpc.example'], 'X-Api-Key': ['hdr-secret'] };
const SECRETS = ['PASS', KEY, 'K1', 'hdr-secret'];
const RE_ENTER = /re-enter the secret for the new destination/;

describe('origin addresses and secrets bound to their destination', () => {
  let f: ApiFixture;
  let pools: string;
  let poolId = '';
  before(async () => {
    f = await startApiFixture();
    pools = `/accounts/${f.accountId}/load_balancers/pools`;
    const created = await f.call('POST', pools, {
      body: {
        name: 'keyed',
        origins: [
          { name: 'a', address: SECRET_ADDRESS, header: HEADER },
          { name: 'b', address: '127.0.0.1:8545' },
        ],
      },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    poolId = (created.body.result as { id: string }).id;
  });
  after(() => f?.close());

  const stored = async () => {
    const pool = await getPool(f.app.store.db, f.app.secrets, f.accountId, poolId);
    assert.ok(pool);
    return pool;
  };

  test('stores the canonical form and shows it masked to read-write and read-only tokens', async () => {
    for (const token of [f.token, f.readToken]) {
      const got = await f.call('GET', `${pools}/${poolId}`, { token });
      const text = JSON.stringify(got.body);
      for (const secret of SECRETS) assert.ok(!text.includes(secret), `${secret} in ${text}`);
      const origins = (got.body.result as { origins: { address: string; header: unknown }[] }).origins;
      assert.equal(origins[0]?.address, MASKED_ADDRESS);
      assert.deepEqual(origins[0]?.header, { Host: ['rpc.example'], 'X-Api-Key': ['***'] });
      assert.equal(origins[1]?.address, '127.0.0.1:8545', 'a bare host[:port] reads back as written');
      const list = await f.call('GET', pools, { token });
      for (const secret of SECRETS) assert.ok(!JSON.stringify(list.body).includes(secret), secret);
      const health = await f.call('GET', `${pools}/${poolId}/health`, { token });
      assert.equal(health.status, 200);
      for (const secret of SECRETS) assert.ok(!JSON.stringify(health.body).includes(secret), secret);
    }
    const spelled = await f.call('POST', pools, {
      body: { name: 'spelled', origins: [{ name: 'a', address: 'HTTP://Node.Example:80/v1' }] },
    });
    assert.equal(spelled.status, 200);
    const id = (spelled.body.result as { id: string }).id;
    assert.equal(
      (await getPool(f.app.store.db, f.app.secrets, f.accountId, id))?.origins[0]?.address,
      'http://node.example/v1',
    );
    assert.equal((await f.call('DELETE', `${pools}/${id}`)).status, 200);
  });

  test('every refused address is 400 / 1002 naming the field, and changes nothing', async () => {
    const before = await stored();
    const count = async () => ((await f.call('GET', pools)).body.result as unknown[]).length;
    const poolsBefore = await count();
    const refused = [
      'apiuser:PASS@127.0.0.1:9/v3/KEY?apikey=K',
      'user:pw@host',
      'host:8545/v3/key',
      'host:8545?apikey=K',
      'ws://127.0.0.1:8546',
      'ftp://host/',
      'http://',
      'http://h/x#frag',
      'http://h:0',
      'http://h\r\nX-Injected: 1',
      'http://h/\u0000',
      'http://h/a\tb',
      'h\n',
      'http://h/a b',
      'http://evil\\@good/',
    ];
    for (const address of refused) {
      const label = JSON.stringify(address);
      // NUL is refused for the whole body before any field is read (api/body.ts).
      const field = (name: string) => (address.includes('\u0000') ? /NUL/ : new RegExp(`^${name}: `));
      const post = await f.call('POST', pools, { body: { name: 'bad', origins: [{ name: 'a', address }] } });
      assert.equal(post.status, 400, label);
      assert.equal(post.body.errors[0]?.code, 1002, label);
      assert.match(post.body.errors[0]?.message ?? '', field('origins\\.0\\.address'), label);
      assert.ok(!(post.body.errors[0]?.message ?? '').includes('PASS'), 'the address is never echoed');
      const put = await f.call('PUT', `${pools}/${poolId}`, {
        body: {
          name: 'keyed',
          origins: [
            { name: 'a', address: MASKED_ADDRESS },
            { name: 'b', address },
          ],
        },
      });
      assert.equal(put.status, 400, label);
      assert.match(put.body.errors[0]?.message ?? '', field('origins\\.1\\.address'), label);
      const patch = await f.call('PATCH', `${pools}/${poolId}`, { body: { origins: [{ name: 'b', address }] } });
      assert.equal(patch.status, 400, label);
    }
    assert.deepEqual(await stored(), before);
    assert.equal(await count(), poolsBefore);
  });

  test('*** sent back keeps the stored secrets while the destination is unchanged', async () => {
    const before = await stored();
    const got = (await f.call('GET', `${pools}/${poolId}`)).body.result as Record<string, unknown>;
    const put = await f.call('PUT', `${pools}/${poolId}`, { body: got });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const after = await stored();
    assert.equal(after.origins[0]?.address, SECRET_ADDRESS);
    assert.deepEqual(after.origins[0]?.header, HEADER);
    assert.equal(after.origins[0]?.address, before.origins[0]?.address);

    // Same scheme/host/port (default port written out, another host spelling), a non-secret change.
    const patch = await f.call('PATCH', `${pools}/${poolId}`, {
      body: {
        origins: [
          {
            name: 'a',
            address: 'https://***:***@RPC.example:443/v3/***?apikey=***&chain=2',
            header: { 'X-Api-Key': ['***'] },
          },
        ],
      },
    });
    assert.equal(patch.status, 200, JSON.stringify(patch.body));
    const patched = await stored();
    assert.equal(patched.origins[0]?.address, `https://apiuser:PASS@rpc.example/v3/${KEY}?apikey=K1&chain=2`);
    assert.deepEqual(patched.origins[0]?.header, { 'X-Api-Key': ['hdr-secret'] });
  });

  test('a new destination with *** is 400 "re-enter the secret" and nothing changes', async () => {
    await f.call('PUT', `${pools}/${poolId}`, {
      body: { name: 'keyed', origins: [{ name: 'a', address: SECRET_ADDRESS, header: HEADER }] },
    });
    const before = await stored();
    const cases: Array<[string, { address: string; header?: Record<string, string[]> }, RegExp]> = [
      [
        'new host, masked address',
        { address: 'https://***:***@evil.example/v3/***?apikey=***' },
        /^origins\.0\.address: /,
      ],
      ['new port, masked address', { address: 'https://***:***@rpc.example:8443/v3/***' }, /^origins\.0\.address: /],
      ['new scheme, masked address', { address: 'http://***:***@rpc.example/v3/***' }, /^origins\.0\.address: /],
      [
        'new host, full address, masked header',
        { address: 'https://evil.example/', header: { 'X-Api-Key': ['***'] } },
        /^origins\.0\.header\.X-Api-Key: /,
      ],
    ];
    for (const [label, origin, field] of cases) {
      for (const method of ['PUT', 'PATCH']) {
        const body =
          method === 'PUT'
            ? { name: 'keyed', origins: [{ name: 'a', ...origin }] }
            : { origins: [{ name: 'a', ...origin }] };
        const res = await f.call(method, `${pools}/${poolId}`, { body });
        assert.equal(res.status, 400, `${method} ${label}`);
        assert.equal(res.body.errors[0]?.code, 1002);
        assert.match(res.body.errors[0]?.message ?? '', field, label);
        assert.match(res.body.errors[0]?.message ?? '', RE_ENTER, label);
      }
    }
    assert.deepEqual(await stored(), before);

    const reentered = await f.call('PUT', `${pools}/${poolId}`, {
      body: {
        name: 'keyed',
        origins: [
          { name: 'a', address: 'https://u2:NEWPASS@other.example/v3/x', header: { 'X-Api-Key': ['new-key'] } },
        ],
      },
    });
    assert.equal(reentered.status, 200, JSON.stringify(reentered.body));
    const after = await stored();
    assert.equal(after.origins[0]?.address, 'https://u2:NEWPASS@other.example/v3/x');
    assert.deepEqual(after.origins[0]?.header, { 'X-Api-Key': ['new-key'] });
  });

  test('*** standing for nothing stored is refused', async () => {
    const before = await stored();
    for (const origin of [
      { name: 'renamed', address: 'https://***:***@other.example/v3/x' },
      { name: 'a', address: 'https://***:***@other.example/v3/x?token=***' },
      { name: 'a', address: 'https://other.example/v3/x', header: { Authorization: ['***'] } },
    ]) {
      const res = await f.call('PATCH', `${pools}/${poolId}`, { body: { origins: [origin] } });
      assert.equal(res.status, 400, JSON.stringify(origin));
    }
    assert.deepEqual(await stored(), before);
  });
});

describe('webhook destinations: masked URLs and secrets bound to the URL origin', () => {
  let f: ApiFixture;
  let receiver: Receiver;
  let elsewhere: Receiver;
  let hooks: string;
  let id = '';
  const HOOK_KEY = 'abcdefabcdefabcdefabcdefabcdefab';
  before(async () => {
    f = await startApiFixture();
    receiver = await startReceiver();
    elsewhere = await startReceiver();
    hooks = `/accounts/${f.accountId}/alerting/v3/destinations/webhooks`;
  });
  after(async () => {
    await f?.close();
    await receiver?.close();
    await elsewhere?.close();
  });

  const target = async () => getDestinationTarget(f.app.store.db, f.app.secrets, id);
  const hookUrl = (r: Receiver) => `http://hookuser:HOOKPW@127.0.0.1:${r.port}/hook/${HOOK_KEY}?token=T0K`;

  test('the URL is shown masked; *** in it and an omitted or *** secret keep the stored ones', async () => {
    const bad = [
      { name: 'x', url: `${receiver.url}/a\r\nb` },
      { name: 'x', url: `${receiver.url}/***` },
      { name: 'x', url: receiver.url, secret: '***' },
    ];
    for (const body of bad) {
      const res = await f.call('POST', hooks, { body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.errors[0]?.code, 1002);
    }
    const created = await f.call('POST', hooks, { body: { name: 'ops', url: hookUrl(receiver), secret: 'WHSECRET' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    id = (created.body.result as { id: string }).id;
    const got = await f.call('GET', `${hooks}/${id}`, { token: f.readToken });
    const shown = (got.body.result as { url: string }).url;
    assert.equal(shown, `http://***:***@127.0.0.1:${receiver.port}/hook/***?token=***`);
    const listed = JSON.stringify((await f.call('GET', hooks)).body);
    for (const secret of ['HOOKPW', HOOK_KEY, 'T0K', 'WHSECRET']) {
      assert.ok(!JSON.stringify(got.body).includes(secret) && !listed.includes(secret), secret);
    }
    for (const secret of [undefined, '***']) {
      const put = await f.call('PUT', `${hooks}/${id}`, {
        body: { name: 'ops', url: shown, ...(secret === undefined ? {} : { secret }) },
      });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.deepEqual(await target(), { account_id: f.accountId, url: hookUrl(receiver), secret: 'WHSECRET' });
      assert.equal(receiver.requests.at(-1)?.headers['cf-webhook-auth'], 'WHSECRET');
      assert.equal(receiver.requests.at(-1)?.url, `/hook/${HOOK_KEY}?token=T0K`);
    }
  });

  test('another host or port with *** or without the secret is 400 and changes nothing; re-entered is accepted', async () => {
    const before = await target();
    const sentElsewhere = elsewhere.requests.length;
    const cases = [
      { name: 'ops', url: `http://***:***@127.0.0.1:${elsewhere.port}/hook/***?token=***` },
      { name: 'ops', url: `${elsewhere.url}/plain` },
      { name: 'ops', url: `${elsewhere.url}/plain`, secret: '***' },
      { name: 'ops', url: `http://localhost:${receiver.port}/hook` },
    ];
    for (const body of cases) {
      const res = await f.call('PUT', `${hooks}/${id}`, { body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.errors[0]?.code, 1002);
      assert.match(res.body.errors[0]?.message ?? '', RE_ENTER, JSON.stringify(body));
    }
    assert.deepEqual(await target(), before);
    assert.equal(elsewhere.requests.length, sentElsewhere, 'nothing was sent to the new host');

    const moved = await f.call('PUT', `${hooks}/${id}`, {
      body: { name: 'ops', url: `${elsewhere.url}/plain`, secret: 'NEWSECRET' },
    });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal((await target())?.secret, 'NEWSECRET');
    assert.equal(elsewhere.requests.at(-1)?.headers['cf-webhook-auth'], 'NEWSECRET');
    const cleared = await f.call('PUT', `${hooks}/${id}`, {
      body: { name: 'ops', url: `${receiver.url}/x`, secret: '' },
    });
    assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
    assert.equal((await target())?.secret, null);
  });
});
