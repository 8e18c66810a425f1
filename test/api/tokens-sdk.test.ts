// Account API tokens through the official Cloudflare SDK (`client.accounts.tokens.*`): permission groups,
// create / list / get / verify / update / roll / delete, status and expiry on an injected clock, read-only
// versus read-write groups, another account's tokens, and the tokens made before this API existed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Cloudflare from 'cloudflare';
import type { Token } from 'cloudflare/resources/shared';
import { READ_GROUP_ID, WRITE_GROUP_ID } from '../../src/accounts/token-permissions.js';
import { ManualClock } from '../../src/clock.js';
import { type ApiFixture, OTHER_ACCOUNT, startApiFixture } from './setup.js';

const START = Date.parse('2031-03-01T12:00:00.000Z');
const HOUR = 3_600_000;

describe('account API tokens through the cloudflare SDK', () => {
  let f: ApiFixture;
  let account_id = '';
  const clock = new ManualClock(START);

  before(async () => {
    f = await startApiFixture({}, { clock });
    account_id = f.accountId;
  });
  after(() => f.close());

  const sdkWith = (apiToken: string) => new Cloudflare({ apiToken, baseURL: f.app.apiUrl, maxRetries: 0 });
  const policy = (groupId: string, account = account_id) => ({
    effect: 'allow' as const,
    permission_groups: [{ id: groupId }],
    resources: { [`com.cloudflare.api.account.${account}`]: '*' },
  });
  // Takes a thunk: the SDK starts a request when the call is made, so a list of started calls would
  // reject unobserved while an earlier one is awaited.
  const status = async (call: () => Promise<unknown>): Promise<number | undefined> => {
    try {
      await call();
      return 200;
    } catch (err) {
      if (err instanceof Cloudflare.APIError) return err.status;
      throw err;
    }
  };
  const listAll = async (sdk: Cloudflare, query: Record<string, unknown> = {}) => {
    const out: Token[] = [];
    for await (const token of sdk.accounts.tokens.list({ account_id, ...query })) out.push(token);
    return out;
  };
  const verifyStatus = (token: string) =>
    f.call('GET', `/accounts/${account_id}/tokens/verify`, { token }).then((res) => res.status);

  test('permission groups: "Switchyard Read" and "Switchyard Write" with fixed ids', async () => {
    const groups = [];
    for await (const group of f.sdk.accounts.tokens.permissionGroups.list({ account_id })) groups.push(group);
    assert.deepEqual(
      groups.map((group) => [group.id, group.name]),
      [
        ['0e4a1dff8b6ac4534dcb286eb8df7c78', 'Switchyard Read'],
        ['b688b1f8d4ebf2e4198be92100a4496a', 'Switchyard Write'],
      ],
    );
    assert.equal(READ_GROUP_ID, '0e4a1dff8b6ac4534dcb286eb8df7c78');
    assert.equal(WRITE_GROUP_ID, 'b688b1f8d4ebf2e4198be92100a4496a');
    const write = await f.sdk.accounts.tokens.permissionGroups.get({ account_id, name: 'Switchyard Write' });
    assert.deepEqual(
      write.map((group) => group.id),
      [WRITE_GROUP_ID],
    );
    const none = await f.sdk.accounts.tokens.permissionGroups.get({ account_id, scope: 'com.cloudflare.api.user' });
    assert.deepEqual(none, []);
    // A read-only token may read them too.
    assert.equal(await status(() => sdkWith(f.readToken).accounts.tokens.permissionGroups.get({ account_id })), 200);
  });

  test('tokens made before this API (token create) are listed with the matching group, never a value', async () => {
    const res = await f.call('GET', `/accounts/${account_id}/tokens?per_page=100`);
    assert.equal(res.status, 200);
    const text = JSON.stringify(res.body);
    for (const secret of [f.token, f.readToken, f.otherToken])
      assert.ok(!text.includes(secret), 'no secret in the list');
    assert.ok(!text.includes('"value"') && !text.includes('hash'), 'no value or hash field');
    const tokens = res.body.result as Token[];
    const groups = tokens.map((token) => token.policies?.[0]?.permission_groups.map((group) => group.name)).sort();
    assert.deepEqual(groups, [['Switchyard Read'], ['Switchyard Write']]);
    for (const token of tokens) {
      assert.equal(token.status, 'active');
      assert.deepEqual(token.policies?.[0]?.resources, { [`com.cloudflare.api.account.${account_id}`]: '*' });
      assert.equal(token.policies?.[0]?.effect, 'allow');
      assert.ok(token.issued_on !== undefined && token.modified_on !== undefined);
      assert.ok(token.last_used_on !== undefined, 'the fixture tokens were used, so last_used_on is set');
    }
  });

  test('create with a permission group, list, get, verify; the value is shown once', async () => {
    const created = await f.sdk.accounts.tokens.create({
      account_id,
      name: 'deploy bot',
      policies: [policy(WRITE_GROUP_ID)],
    });
    assert.match(created.id ?? '', /^[0-9a-f]{32}$/);
    assert.match(created.value ?? '', /^swy_[A-Za-z0-9]{40}$/);
    assert.equal(created.name, 'deploy bot');
    assert.equal(created.status, 'active');
    assert.equal(created.issued_on, new Date(START).toISOString());
    assert.equal(created.policies?.[0]?.permission_groups[0]?.name, 'Switchyard Write');
    assert.match(created.policies?.[0]?.id ?? '', /^[0-9a-f]{32}$/);

    const got = await f.sdk.accounts.tokens.get(created.id as string, { account_id });
    assert.equal((got as Record<string, unknown>).value, undefined, 'get never returns the value');
    const { value: _value, ...withoutValue } = created;
    assert.deepEqual(got, withoutValue);
    assert.ok((await listAll(f.sdk)).some((token) => token.id === created.id));

    const own = sdkWith(created.value as string);
    const verified = await own.accounts.tokens.verify({ account_id });
    assert.deepEqual(verified, { id: created.id, status: 'active' });
    const user = await f.call('GET', '/user/tokens/verify', { token: created.value as string });
    assert.deepEqual(user.body.result, { id: created.id, status: 'active' });
    // A write token made through the API can write pools.
    const pool = await own.loadBalancers.pools.create({
      account_id,
      name: 'bot-pool',
      origins: [{ name: 'o', address: '127.0.0.1:1' }],
    });
    assert.match(pool.id ?? '', /^[0-9a-f]{32}$/);
    const after = await f.sdk.accounts.tokens.get(created.id as string, { account_id });
    assert.equal(after.last_used_on, new Date(START).toISOString());
  });

  test('roll: the answer is the new value; the old value is refused at once', async () => {
    const created = await f.sdk.accounts.tokens.create({
      account_id,
      name: 'rolled',
      policies: [policy(READ_GROUP_ID)],
    });
    const old = created.value as string;
    assert.equal(await verifyStatus(old), 200);
    const fresh = await f.sdk.accounts.tokens.value.update(created.id as string, { account_id });
    assert.equal(typeof fresh, 'string');
    assert.match(fresh, /^swy_[A-Za-z0-9]{40}$/);
    assert.notEqual(fresh, old);
    assert.equal(await verifyStatus(old), 401);
    assert.equal(await status(() => sdkWith(old).accounts.tokens.verify({ account_id })), 401);
    assert.equal(await verifyStatus(fresh), 200);
    const got = await f.sdk.accounts.tokens.get(created.id as string, { account_id });
    assert.equal(got.name, 'rolled');
    assert.equal(got.status, 'active');
  });

  test('disable → 401 on the next request; enable again → works', async () => {
    const created = await f.sdk.accounts.tokens.create({
      account_id,
      name: 'toggle',
      policies: [policy(WRITE_GROUP_ID)],
    });
    const value = created.value as string;
    const disabled = await f.sdk.accounts.tokens.update(created.id as string, {
      account_id,
      name: 'toggle',
      policies: [policy(WRITE_GROUP_ID)],
      status: 'disabled',
    });
    assert.equal(disabled.status, 'disabled');
    assert.equal(await verifyStatus(value), 401);
    const refused = await f.call('GET', '/user/tokens/verify', { token: value });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.errors[0]?.code, 10000);
    assert.match(refused.body.errors[0]?.message ?? '', /disabled/);
    assert.equal(await status(() => sdkWith(value).loadBalancers.pools.list({ account_id })), 401);
    const listed = (await listAll(f.sdk)).find((token) => token.id === created.id);
    assert.equal(listed?.status, 'disabled');

    const enabled = await f.sdk.accounts.tokens.update(created.id as string, {
      account_id,
      name: 'toggle',
      policies: [policy(WRITE_GROUP_ID)],
      status: 'active',
    });
    assert.equal(enabled.status, 'active');
    assert.equal(await verifyStatus(value), 200);
  });

  test('expiry on the injected clock: active until expires_on, then "expired" and 401', async () => {
    const expires = new Date(clock.now() + HOUR).toISOString();
    const created = await f.sdk.accounts.tokens.create({
      account_id,
      name: 'short-lived',
      policies: [policy(READ_GROUP_ID)],
      expires_on: expires,
    });
    const value = created.value as string;
    assert.equal(created.expires_on, expires);
    assert.deepEqual(await sdkWith(value).accounts.tokens.verify({ account_id }), {
      id: created.id,
      status: 'active',
      expires_on: expires,
    });
    try {
      clock.advance(HOUR);
      assert.equal(await verifyStatus(value), 401, 'refused from expires_on on');
      const refused = await f.call('GET', `/accounts/${account_id}/load_balancers/pools`, { token: value });
      assert.match(refused.body.errors[0]?.message ?? '', /expired/);
      const got = await f.sdk.accounts.tokens.get(created.id as string, { account_id });
      assert.equal(got.status, 'expired');
      assert.ok(!(await listAll(f.sdk)).some((token) => token.id === created.id), 'expired tokens are left out');
      const all = await listAll(f.sdk, { include_expired: true });
      assert.equal(all.find((token) => token.id === created.id)?.status, 'expired');

      // An expires_on in the past given directly: expired at once.
      const past = await f.sdk.accounts.tokens.create({
        account_id,
        name: 'born expired',
        policies: [policy(READ_GROUP_ID)],
        expires_on: '2020-01-01T00:00:00Z',
      });
      assert.equal(past.status, 'expired');
      assert.equal(past.expires_on, '2020-01-01T00:00:00.000Z');
      assert.equal(await verifyStatus(past.value as string), 401);

      // Extending expires_on brings it back.
      const extended = await f.sdk.accounts.tokens.update(created.id as string, {
        account_id,
        name: 'short-lived',
        policies: [policy(READ_GROUP_ID)],
        expires_on: new Date(clock.now() + HOUR).toISOString(),
      });
      assert.equal(extended.status, 'active');
      assert.equal(await verifyStatus(value), 200);
    } finally {
      clock.set(START);
    }
  });

  test('not_before in the future: 401 until then', async () => {
    const from = new Date(clock.now() + 10 * 60_000).toISOString();
    const created = await f.sdk.accounts.tokens.create({
      account_id,
      name: 'later',
      policies: [policy(READ_GROUP_ID)],
      not_before: from,
    });
    const value = created.value as string;
    assert.equal(created.status, 'active');
    const early = await f.call('GET', `/accounts/${account_id}/tokens/verify`, { token: value });
    assert.equal(early.status, 401);
    assert.match(early.body.errors[0]?.message ?? '', /not valid before/);
    try {
      clock.advance(10 * 60_000);
      assert.deepEqual(await sdkWith(value).accounts.tokens.verify({ account_id }), {
        id: created.id,
        status: 'active',
        not_before: from,
      });
    } finally {
      clock.set(START);
    }
  });

  test('delete → 401 on the next request, 404 afterwards', async () => {
    const created = await f.sdk.accounts.tokens.create({
      account_id,
      name: 'doomed',
      policies: [policy(READ_GROUP_ID)],
    });
    const value = created.value as string;
    assert.equal(await verifyStatus(value), 200);
    const deleted = await f.sdk.accounts.tokens.delete(created.id as string, { account_id });
    assert.deepEqual(deleted, { id: created.id });
    assert.equal(await verifyStatus(value), 401);
    assert.equal(await status(() => f.sdk.accounts.tokens.get(created.id as string, { account_id })), 404);
    const again = await f.call('DELETE', `/accounts/${account_id}/tokens/${created.id}`);
    assert.equal(again.status, 404);
    assert.equal(again.body.errors[0]?.code, 7003);
  });

  test('a token may delete itself; its next request is 401', async () => {
    const created = await f.sdk.accounts.tokens.create({
      account_id,
      name: 'self',
      policies: [policy(WRITE_GROUP_ID)],
    });
    const own = sdkWith(created.value as string);
    await own.accounts.tokens.delete(created.id as string, { account_id });
    assert.equal(await status(() => own.accounts.tokens.verify({ account_id })), 401);
  });

  test('a read-only token lists, gets and verifies, but cannot create, change, roll or delete tokens nor write pools', async () => {
    const made = await f.sdk.accounts.tokens.create({ account_id, name: 'reader', policies: [policy(READ_GROUP_ID)] });
    const target = await f.sdk.accounts.tokens.create({
      account_id,
      name: 'target',
      policies: [policy(READ_GROUP_ID)],
    });
    for (const reader of [sdkWith(f.readToken), sdkWith(made.value as string)]) {
      assert.ok((await listAll(reader)).length >= 2);
      assert.equal((await reader.accounts.tokens.get(target.id as string, { account_id })).name, 'target');
      assert.equal((await reader.accounts.tokens.verify({ account_id })).status, 'active');
      const writes: Array<[string, () => Promise<unknown>]> = [
        ['create', () => reader.accounts.tokens.create({ account_id, name: 'x', policies: [policy(WRITE_GROUP_ID)] })],
        [
          'update',
          () =>
            reader.accounts.tokens.update(target.id as string, {
              account_id,
              name: 'x',
              policies: [policy(WRITE_GROUP_ID)],
            }),
        ],
        ['roll', () => reader.accounts.tokens.value.update(target.id as string, { account_id })],
        ['delete', () => reader.accounts.tokens.delete(target.id as string, { account_id })],
        [
          'pool',
          () =>
            reader.loadBalancers.pools.create({
              account_id,
              name: 'p',
              origins: [{ name: 'o', address: '127.0.0.1:1' }],
            }),
        ],
      ];
      for (const [what, call] of writes) assert.equal(await status(call), 403, what);
    }
    const after = await f.sdk.accounts.tokens.get(target.id as string, { account_id });
    assert.equal(after.name, 'target');
    assert.equal(after.modified_on, target.modified_on);
    assert.equal(after.policies?.[0]?.permission_groups[0]?.id, READ_GROUP_ID);
  });

  test('read-write access follows the Write group: an update to Read makes the token read-only', async () => {
    const created = await f.sdk.accounts.tokens.create({
      account_id,
      name: 'both',
      policies: [{ ...policy(READ_GROUP_ID), permission_groups: [{ id: READ_GROUP_ID }, { id: WRITE_GROUP_ID }] }],
    });
    const own = sdkWith(created.value as string);
    const pool = { account_id, name: 'rw-check', origins: [{ name: 'o', address: '127.0.0.1:1' }] };
    assert.equal(await status(() => own.loadBalancers.pools.create(pool)), 200);
    await f.sdk.accounts.tokens.update(created.id as string, {
      account_id,
      name: 'both',
      policies: [policy(READ_GROUP_ID)],
    });
    assert.equal(await status(() => own.loadBalancers.pools.create({ ...pool, name: 'rw-check-2' })), 403);
    assert.equal(await status(() => own.loadBalancers.pools.list({ account_id })), 200);
  });

  test("another account's token: 403 on this account's tokens, and no data in the answer", async () => {
    const target = await f.sdk.accounts.tokens.create({
      account_id,
      name: 'secret-name',
      policies: [policy(READ_GROUP_ID)],
    });
    const other = sdkWith(f.otherToken);
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['list', () => other.accounts.tokens.list({ account_id })],
      ['get', () => other.accounts.tokens.get(target.id as string, { account_id })],
      ['verify', () => other.accounts.tokens.verify({ account_id })],
      ['groups', () => other.accounts.tokens.permissionGroups.get({ account_id })],
      ['create', () => other.accounts.tokens.create({ account_id, name: 'x', policies: [policy(WRITE_GROUP_ID)] })],
      [
        'update',
        () =>
          other.accounts.tokens.update(target.id as string, {
            account_id,
            name: 'x',
            policies: [policy(READ_GROUP_ID)],
            status: 'disabled',
          }),
      ],
      ['roll', () => other.accounts.tokens.value.update(target.id as string, { account_id })],
      ['delete', () => other.accounts.tokens.delete(target.id as string, { account_id })],
    ];
    for (const [what, call] of calls) assert.equal(await status(call), 403, what);
    const raw = await f.call('GET', `/accounts/${account_id}/tokens/${target.id}`, { token: f.otherToken });
    assert.equal(raw.status, 403);
    assert.equal(raw.body.result, null);
    assert.ok(!JSON.stringify(raw.body).includes('secret-name'));
    const unknown = await f.call('GET', `/accounts/${account_id}/tokens/${'f'.repeat(32)}`, { token: f.otherToken });
    assert.deepEqual(unknown.body, raw.body, 'no hint whether the token exists');
    // A token of this account cannot grant access to the other account either.
    const cross = await f.call('POST', `/accounts/${account_id}/tokens`, {
      body: { name: 'cross', policies: [policy(WRITE_GROUP_ID, OTHER_ACCOUNT)] },
    });
    assert.equal(cross.status, 400);
    assert.equal(cross.body.errors[0]?.code, 1002);
    assert.match(cross.body.errors[0]?.message ?? '', /^policies\.0\.resources: /);
    const got = await f.sdk.accounts.tokens.get(target.id as string, { account_id });
    assert.equal(got.status, 'active');
    assert.equal(got.modified_on, target.modified_on);
  });

  test('unknown and malformed token ids: 404 / 7003', async () => {
    for (const [method, suffix] of [
      ['GET', ''],
      ['PUT', ''],
      ['DELETE', ''],
      ['PUT', '/value'],
    ] as const) {
      for (const id of ['f'.repeat(32), 'not-an-id']) {
        const body = method === 'PUT' && suffix === '' ? { name: 'x' } : undefined;
        const res = await f.call(method, `/accounts/${account_id}/tokens/${id}${suffix}`, body ? { body } : {});
        assert.equal(res.status, 404, `${method} ${id}${suffix}`);
        assert.equal(res.body.errors[0]?.code, 7003);
      }
    }
  });

  test('the OpenAPI document lists every token route', async () => {
    const doc = (await (await fetch(`${f.app.apiUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>;
    };
    const base = '/accounts/{account_id}/tokens';
    for (const [path, methods] of [
      [base, ['get', 'post']],
      [`${base}/verify`, ['get']],
      [`${base}/permission_groups`, ['get']],
      [`${base}/{token_id}`, ['get', 'put', 'delete']],
      [`${base}/{token_id}/value`, ['put']],
    ] as const) {
      for (const method of methods) assert.ok(doc.paths[path]?.[method], `${method} ${path}`);
    }
    assert.ok(doc.paths[base]?.post?.requestBody, 'create documents its body');
    assert.ok(doc.paths[`${base}/{token_id}`]?.put?.requestBody, 'update documents its body');
    const roll = doc.paths[`${base}/{token_id}/value`]?.put?.requestBody as { required?: boolean } | undefined;
    assert.equal(roll?.required, false, 'a roll takes no body');
    const create = doc.paths[base]?.post?.requestBody as { required?: boolean } | undefined;
    assert.equal(create?.required, true);
  });
});
