// Account API tokens: every refused input is 400 / 1002 naming the field and changes nothing (read back);
// what a GET returns can be sent back with PUT unchanged.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { READ_GROUP_ID, WRITE_GROUP_ID } from '../../src/accounts/token-permissions.js';
import { type ApiFixture, OTHER_ACCOUNT, startApiFixture } from './setup.js';

describe('account API tokens: refused inputs', () => {
  let f: ApiFixture;
  let base = '';
  let resource = '';
  let target: Record<string, unknown> = {};
  let targetValue = '';

  before(async () => {
    f = await startApiFixture();
    base = `/accounts/${f.accountId}/tokens`;
    resource = `com.cloudflare.api.account.${f.accountId}`;
    const created = await f.call('POST', base, {
      body: {
        name: 'target',
        policies: [{ effect: 'allow', permission_groups: [{ id: READ_GROUP_ID }], resources: { [resource]: '*' } }],
        expires_on: '2099-01-01T00:00:00Z',
      },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const { value, ...rest } = created.body.result as Record<string, unknown>;
    target = rest;
    targetValue = value as string;
  });
  after(() => f.close());

  const policy = (overrides: Record<string, unknown> = {}) => ({
    effect: 'allow',
    permission_groups: [{ id: WRITE_GROUP_ID }],
    resources: { [resource]: '*' },
    ...overrides,
  });
  const valid = () => ({ name: 'ok', policies: [policy()] });

  /** [what, body, field the message must start with] — each refused on POST and on PUT. */
  const cases = (): Array<[string, unknown, string]> => [
    ['name missing (POST only)', { policies: [policy()] }, 'name'],
    ['name empty', { ...valid(), name: '' }, 'name'],
    ['name too long', { ...valid(), name: 'n'.repeat(121) }, 'name'],
    ['name with LF', { ...valid(), name: 'a\nb' }, 'name'],
    ['name with NUL-free control character', { ...valid(), name: 'a\u0007b' }, 'name'],
    ['name not a string', { ...valid(), name: 5 }, 'name'],
    ['policies missing (POST only)', { name: 'x' }, 'policies'],
    ['policies empty', { ...valid(), policies: [] }, 'policies'],
    ['policies not a list', { ...valid(), policies: 'all' }, 'policies'],
    ['effect deny', { ...valid(), policies: [policy({ effect: 'deny' })] }, 'policies.0.effect'],
    [
      'effect missing',
      { ...valid(), policies: [{ permission_groups: [{ id: READ_GROUP_ID }], resources: { [resource]: '*' } }] },
      'policies.0.effect',
    ],
    [
      'no permission group',
      { ...valid(), policies: [policy({ permission_groups: [] })] },
      'policies.0.permission_groups',
    ],
    [
      'unknown permission group',
      { ...valid(), policies: [policy({ permission_groups: [{ id: 'f'.repeat(32) }] })] },
      'policies.0.permission_groups.0.id',
    ],
    [
      'group name not its id',
      { ...valid(), policies: [policy({ permission_groups: [{ id: READ_GROUP_ID, name: 'Switchyard Write' }] })] },
      'policies.0.permission_groups.0.name',
    ],
    [
      'unknown group field',
      { ...valid(), policies: [policy({ permission_groups: [{ id: READ_GROUP_ID, scope: 'x' }] })] },
      'policies.0.permission_groups.0.scope',
    ],
    ['no resource', { ...valid(), policies: [policy({ resources: {} })] }, 'policies.0.resources'],
    [
      'another account',
      { ...valid(), policies: [policy({ resources: { [`com.cloudflare.api.account.${OTHER_ACCOUNT}`]: '*' } })] },
      'policies.0.resources',
    ],
    [
      'this and another account',
      {
        ...valid(),
        policies: [policy({ resources: { [resource]: '*', [`com.cloudflare.api.account.${OTHER_ACCOUNT}`]: '*' } })],
      },
      'policies.0.resources',
    ],
    [
      'a zone resource',
      {
        ...valid(),
        policies: [policy({ resources: { 'com.cloudflare.api.account.zone.22b1de5f1c0e4b3ea97bb1e963b06a43': '*' } })],
      },
      'policies.0.resources',
    ],
    [
      'resource value not *',
      { ...valid(), policies: [policy({ resources: { [resource]: 'read' } })] },
      `policies.0.resources.${resource}`,
    ],
    [
      'nested resources',
      { ...valid(), policies: [policy({ resources: { [resource]: { 'com.cloudflare.api.account.zone.*': '*' } } })] },
      `policies.0.resources.${resource}`,
    ],
    ['policy id not hex', { ...valid(), policies: [policy({ id: 'abc' })] }, 'policies.0.id'],
    ['unknown policy field', { ...valid(), policies: [policy({ priority: 1 })] }, 'policies.0.priority'],
    ['second policy bad', { ...valid(), policies: [policy(), policy({ effect: 'deny' })] }, 'policies.1.effect'],
    ['expires_on not a date', { ...valid(), expires_on: 'tomorrow' }, 'expires_on'],
    ['expires_on no such day', { ...valid(), expires_on: '2030-02-31T00:00:00Z' }, 'expires_on'],
    ['expires_on a number', { ...valid(), expires_on: 1893456000 }, 'expires_on'],
    ['not_before not a date', { ...valid(), not_before: '2030-01-01' }, 'not_before'],
    [
      'not_before after expires_on',
      { ...valid(), not_before: '2031-01-01T00:00:00Z', expires_on: '2030-01-01T00:00:00Z' },
      'not_before',
    ],
    [
      'status expired without a past expires_on',
      { ...valid(), status: 'expired', expires_on: '2099-01-01T00:00:00Z' },
      'status',
    ],
    ['status unknown', { ...valid(), status: 'revoked' }, 'status'],
    ['an IP condition', { ...valid(), condition: { request_ip: { in: ['10.0.0.0/8'] } } }, 'condition.request_ip.in'],
    [
      'an IP exclusion',
      { ...valid(), condition: { request_ip: { not_in: ['10.0.0.0/8'] } } },
      'condition.request_ip.not_in',
    ],
    ['an unknown condition', { ...valid(), condition: { time: 'night' } }, 'condition.time'],
    ['a value', { ...valid(), value: 'swy_chosen_by_the_client_000000000000000' }, 'value'],
    ['an unknown field', { ...valid(), owner: 'me' }, 'owner'],
    ['not an object', [valid()], 'body'],
    ['not JSON', '{"name": ', 'body'],
  ];

  const listed = async () => {
    const res = await f.call('GET', `${base}?include_expired=true&per_page=1000`);
    assert.equal(res.status, 200);
    return res.body.result as Array<Record<string, unknown>>;
  };
  const refused = (
    res: { status: number; body: { errors: { code: number; message: string }[] } },
    field: string,
    what: string,
  ) => {
    assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.errors[0]?.code, 1002, what);
    const message = res.body.errors[0]?.message ?? '';
    assert.ok(
      message.startsWith(`${field}: `) || message.startsWith(`${field},`),
      `${what}: "${message}" names ${field}`,
    );
  };

  test('POST: every bad input is 400 / 1002 naming the field, and no token is made', async () => {
    const before = await listed();
    for (const [what, body, field] of cases()) {
      refused(await f.call('POST', base, { body }), field, what);
    }
    assert.deepEqual(await listed(), before);
  });

  test('PUT: every bad input is 400 / 1002 naming the field, and the token is unchanged and still works', async () => {
    for (const [what, body, field] of cases()) {
      if (what.endsWith('(POST only)')) continue;
      refused(await f.call('PUT', `${base}/${target.id}`, { body }), field, what);
      const got = await f.call('GET', `${base}/${target.id}`);
      assert.deepEqual(got.body.result, target, `${what}: unchanged`);
    }
    const works = await f.call('GET', `${base}/verify`, { token: targetValue });
    assert.equal(works.status, 200);
  });

  test('roll with a body is refused and keeps the value', async () => {
    const res = await f.call('PUT', `${base}/${target.id}/value`, { body: { value: 'mine' } });
    refused(res, 'value', 'roll with a body');
    assert.equal((await f.call('GET', `${base}/verify`, { token: targetValue })).status, 200);
  });

  test('list query parameters are checked', async () => {
    for (const [query, field] of [
      ['direction=up', 'direction'],
      ['include_expired=yes', 'include_expired'],
      ['direction=asc&direction=desc', 'direction'],
      ['per_page=0', 'per_page'],
    ]) {
      refused(await f.call('GET', `${base}?${query}`), field as string, query as string);
    }
  });

  test('what GET returns can be sent back with PUT; omitted fields keep their value', async () => {
    const got = (await f.call('GET', `${base}/${target.id}`)).body.result as Record<string, unknown>;
    const put = await f.call('PUT', `${base}/${target.id}`, { body: got });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const { modified_on: _a, last_used_on: _b, ...same } = put.body.result as Record<string, unknown>;
    const { modified_on: _c, last_used_on: _d, ...expected } = got;
    assert.deepEqual(same, expected);

    const renamed = await f.call('PUT', `${base}/${target.id}`, { body: { name: 'renamed' } });
    assert.equal(renamed.status, 200);
    const result = renamed.body.result as Record<string, unknown>;
    assert.equal(result.name, 'renamed');
    assert.deepEqual(result.policies, got.policies, 'policies kept');
    assert.equal(result.expires_on, '2099-01-01T00:00:00.000Z', 'expires_on kept');

    const cleared = await f.call('PUT', `${base}/${target.id}`, { body: { expires_on: null } });
    assert.equal((cleared.body.result as Record<string, unknown>).expires_on, undefined, 'null removes expires_on');

    const tolerated = await f.call('POST', base, {
      body: {
        name: 'with extras',
        policies: [
          policy({ permission_groups: [{ id: READ_GROUP_ID, name: 'Switchyard Read', meta: { label: 'x' } }] }),
        ],
        condition: {},
        expires_on: '2099-06-01T02:00:00+02:00',
      },
    });
    assert.equal(tolerated.status, 200, JSON.stringify(tolerated.body));
    const made = tolerated.body.result as Record<string, unknown>;
    assert.equal(made.expires_on, '2099-06-01T00:00:00.000Z', 'stored in UTC');
    assert.deepEqual((made.policies as Array<Record<string, unknown>>)[0]?.permission_groups, [
      { id: READ_GROUP_ID, name: 'Switchyard Read' },
    ]);
  });
});
