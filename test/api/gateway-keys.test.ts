/**
 * Gateway keys as resources (SPEC §11, our extension; the official SDK has no such resource, so plain
 * fetch): create answers the key and its `swk_` value once, list/get never show it, PATCH changes only
 * what it names, roll answers the new value as `result`, delete; only the routing account has keys
 * (another account: 403); writes need a read-write token; inputs are refused with 400 / 1002 naming the
 * field; usage defaults to the last 30 days and validates its dates. Runs on both store backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addUsage } from '../../src/keys/usage-queries.js';
import { middayClock } from '../helpers/midday-clock.js';
import { type ApiFixture, OTHER_ACCOUNT, startApiFixture } from './setup.js';

interface Key {
  id: string;
  name: string;
  enabled: boolean;
  networks: string[] | null;
  rate_limit: { requests_per_second: number; burst: number } | null;
  daily_quota: number | null;
  created_on: string;
  modified_on: string;
  last_used_on: string | null;
  value?: string;
}

const FIELDS = [
  'created_on',
  'daily_quota',
  'enabled',
  'id',
  'last_used_on',
  'modified_on',
  'name',
  'networks',
  'rate_limit',
].sort();

describe('gateway keys API', () => {
  let f: ApiFixture;
  let base: string;
  /** The server's clock: a fixed day, so "today" and the default usage window cannot turn mid-test. */
  const clock = middayClock();

  before(async () => {
    f = await startApiFixture(
      {
        networks: {
          sepolia: { chain_id: 11155111, pools: ['p'] },
          holesky: { chain_id: 17000, pools: ['p'] },
        },
      },
      { clock },
    );
    base = `/accounts/${f.accountId}/gateway/keys`;
  });
  after(async () => {
    await f?.close();
  });

  it('creates a key with defaults: 200, the key object plus its swk_ value', async () => {
    const res = await f.call('POST', base, { body: { name: 'ci' } });
    assert.equal(res.status, 200);
    const key = res.body.result as Key;
    assert.deepEqual(Object.keys(key).sort(), [...FIELDS, 'value'].sort());
    assert.match(key.id, /^[0-9a-f]{32}$/);
    assert.match(key.value ?? '', /^swk_[A-Za-z0-9]{40}$/);
    assert.equal(key.name, 'ci');
    assert.equal(key.enabled, true);
    assert.equal(key.networks, null);
    assert.equal(key.rate_limit, null);
    assert.equal(key.daily_quota, null);
    assert.equal(key.last_used_on, null);
    assert.equal(key.created_on, key.modified_on);
  });

  it('creates a key with every field; burst defaults to ceil(requests_per_second)', async () => {
    const res = await f.call('POST', base, {
      body: {
        name: 'limited',
        enabled: false,
        networks: ['sepolia', 'sepolia'],
        rate_limit: { requests_per_second: 2.5 },
        daily_quota: 1000,
      },
    });
    assert.equal(res.status, 200);
    const key = res.body.result as Key;
    assert.equal(key.enabled, false);
    assert.deepEqual(key.networks, ['sepolia']);
    assert.deepEqual(key.rate_limit, { requests_per_second: 2.5, burst: 3 });
    assert.equal(key.daily_quota, 1000);
  });

  it('list and get never show the value', async () => {
    const created = (await f.call('POST', base, { body: { name: 'listed' } })).body.result as Key;
    const list = await f.call('GET', `${base}?per_page=100`);
    assert.equal(list.status, 200);
    const keys = list.body.result as Key[];
    assert.ok(keys.some((key) => key.id === created.id));
    for (const key of keys) assert.deepEqual(Object.keys(key).sort(), FIELDS);
    assert.equal(list.body.result_info?.total_count, keys.length);
    assert.ok(!JSON.stringify(list.body).includes(created.value as string));
    const one = await f.call('GET', `${base}/${created.id}`, { token: f.readToken });
    assert.equal(one.status, 200);
    assert.deepEqual(Object.keys(one.body.result as Key).sort(), FIELDS);
  });

  it('PATCH changes only the fields it names; null clears', async () => {
    const created = (
      await f.call('POST', base, { body: { name: 'p', daily_quota: 5, rate_limit: { requests_per_second: 1 } } })
    ).body.result as Key;
    const res = await f.call('PATCH', `${base}/${created.id}`, { body: { networks: ['holesky'], daily_quota: null } });
    assert.equal(res.status, 200);
    const key = res.body.result as Key;
    assert.equal(key.name, 'p');
    assert.deepEqual(key.networks, ['holesky']);
    assert.equal(key.daily_quota, null);
    assert.deepEqual(key.rate_limit, { requests_per_second: 1, burst: 1 });
    assert.ok(key.modified_on >= created.modified_on);
    assert.equal((res.body.result as Key).value, undefined);
  });

  it('roll answers the new value as result (a string)', async () => {
    const created = (await f.call('POST', base, { body: {} })).body.result as Key;
    const res = await f.call('PUT', `${base}/${created.id}/value`, { body: {} });
    assert.equal(res.status, 200);
    assert.equal(typeof res.body.result, 'string');
    assert.match(res.body.result as string, /^swk_[A-Za-z0-9]{40}$/);
    assert.notEqual(res.body.result, created.value);
  });

  it('delete answers the id; then the key is 404', async () => {
    const created = (await f.call('POST', base, { body: {} })).body.result as Key;
    const res = await f.call('DELETE', `${base}/${created.id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.result, { id: created.id });
    assert.equal((await f.call('GET', `${base}/${created.id}`)).status, 404);
    assert.equal((await f.call('DELETE', `${base}/${created.id}`)).status, 404);
    assert.equal((await f.call('PUT', `${base}/${created.id}/value`)).status, 404);
  });

  it('only the routing account has keys: another account gets 403', async () => {
    const other = `/accounts/${OTHER_ACCOUNT}/gateway/keys`;
    const list = await f.call('GET', other, { token: f.otherToken });
    assert.equal(list.status, 403);
    assert.equal(list.body.errors[0]?.code, 10000);
    assert.equal((await f.call('POST', other, { token: f.otherToken, body: {} })).status, 403);
    assert.equal((await f.call('GET', `${other}/${'0'.repeat(32)}/usage`, { token: f.otherToken })).status, 403);
    // And another account's token on the routing account's path: 403 as for every resource.
    assert.equal((await f.call('GET', base, { token: f.otherToken })).status, 403);
  });

  it('a read-only token reads but does not write', async () => {
    assert.equal((await f.call('GET', base, { token: f.readToken })).status, 200);
    const res = await f.call('POST', base, { token: f.readToken, body: {} });
    assert.equal(res.status, 403);
    assert.equal((await f.call('GET', base, { token: null })).status, 401);
  });

  it('refuses bad input with 400 / 1002 naming the field, and writes nothing', async () => {
    const before = (await f.call('GET', `${base}?per_page=100`)).body.result_info?.total_count;
    const cases: Array<[unknown, RegExp]> = [
      [{ networks: ['mainnet'] }, /^networks\.0: "mainnet" is not a configured network/],
      [{ networks: [] }, /^networks: needs at least one network/],
      [{ rate_limit: { requests_per_second: 0 } }, /^rate_limit\.requests_per_second:/],
      [{ rate_limit: { requests_per_second: 1, burst: 0.5 } }, /^rate_limit\.burst:/],
      [{ daily_quota: 0 }, /^daily_quota:/],
      [{ daily_quota: 1.5 }, /^daily_quota:/],
      [{ enabled: 'yes' }, /^enabled:/],
      [{ name: 'a\nb' }, /^name: may not contain control characters/],
      [{ value: 'swk_mine' }, /^value: unknown field/],
    ];
    for (const [body, message] of cases) {
      const res = await f.call('POST', base, { body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.errors[0]?.code, 1002);
      assert.match(res.body.errors[0]?.message ?? '', message);
    }
    const key = (await f.call('POST', base, { body: {} })).body.result as Key;
    const patch = await f.call('PATCH', `${base}/${key.id}`, { body: { networks: ['nope'] } });
    assert.equal(patch.status, 400);
    assert.equal(((await f.call('GET', `${base}/${key.id}`)).body.result as Key).networks, null);
    assert.equal((await f.call('GET', `${base}/not-an-id`)).status, 404);
    assert.equal((await f.call('GET', `${base}?per_page=100`)).body.result_info?.total_count, (before ?? 0) + 1);
  });

  /** `body` is refused with 400 / 1002 and `message`, both as a new key and as a change of `keyId`. */
  async function refusedOnCreateAndChange(keyId: string, body: unknown, message: RegExp): Promise<void> {
    for (const [method, path] of [
      ['POST', base],
      ['PATCH', `${base}/${keyId}`],
    ] as const) {
      const res = await f.call(method, path, { body });
      assert.equal(res.status, 400, `${method} ${typeof body === 'string' ? body : JSON.stringify(body)}`);
      assert.equal(res.body.errors[0]?.code, 1002);
      assert.match(res.body.errors[0]?.message ?? '', message);
    }
  }

  it('limits outside their sane bounds are 400 / 1002 naming the range, on create and change; nothing is written', async () => {
    const before = (await f.call('GET', `${base}?per_page=100`)).body.result_info?.total_count;
    const rate = /^rate_limit\.requests_per_second: must be a number from 0\.001 to 1000000$/;
    const burst = /^rate_limit\.burst: must be a whole number from 1 to 1000000000$/;
    const quota = /^daily_quota: must be a whole number from 1 to 1000000000000$/;
    const cases: Array<[unknown, RegExp]> = [
      [{ rate_limit: { requests_per_second: 5e-324 } }, rate],
      [{ rate_limit: { requests_per_second: 0.0009 } }, rate],
      [{ rate_limit: { requests_per_second: 1_000_001 } }, rate],
      [{ rate_limit: { requests_per_second: 1, burst: 1e10 } }, burst],
      [{ daily_quota: 1e12 + 1 }, quota],
      [{ daily_quota: 1e300 }, quota],
    ];
    const key = (await f.call('POST', base, { body: { rate_limit: { requests_per_second: 5 }, daily_quota: 50 } })).body
      .result as Key;
    for (const [body, message] of cases) await refusedOnCreateAndChange(key.id, body, message);
    const read = (await f.call('GET', `${base}/${key.id}`)).body.result as Key;
    assert.deepEqual([read.rate_limit, read.daily_quota], [{ requests_per_second: 5, burst: 5 }, 50]);
    assert.equal(read.modified_on, key.modified_on);
    assert.equal((await f.call('GET', `${base}?per_page=100`)).body.result_info?.total_count, (before ?? 0) + 1);
    // The bounds themselves are accepted.
    const edges = { rate_limit: { requests_per_second: 0.001, burst: 1_000_000_000 }, daily_quota: 1e12 };
    assert.equal((await f.call('PATCH', `${base}/${key.id}`, { body: edges })).status, 200);
    assert.equal(
      (await f.call('PATCH', `${base}/${key.id}`, { body: { rate_limit: { requests_per_second: 1e6 } } })).status,
      200,
    );
  });

  it('a member given twice is 400 / 1002 naming it, at any depth, on create and change; nothing is written', async () => {
    const before = (await f.call('GET', `${base}?per_page=100`)).body.result_info?.total_count;
    const key = (await f.call('POST', base, { body: { name: 'once', daily_quota: 50 } })).body.result as Key;
    const cases: Array<[string, RegExp]> = [
      ['{"daily_quota":100,"daily_quota":1}', /^daily_quota: given twice; each member may appear once$/],
      ['{"name":"a","n\\u0061me":"b"}', /^name: given twice/],
      [
        '{"rate_limit":{"requests_per_second":1,"requests_per_second":1000}}',
        /^rate_limit\.requests_per_second: given twice/,
      ],
      ['{"networks":["sepolia"],"rate_limit":null,"networks":null}', /^networks: given twice/],
    ];
    for (const [body, message] of cases) await refusedOnCreateAndChange(key.id, body, message);
    const read = (await f.call('GET', `${base}/${key.id}`)).body.result as Key;
    assert.deepEqual(
      [read.name, read.daily_quota, read.networks, read.modified_on],
      ['once', 50, null, key.modified_on],
    );
    assert.equal((await f.call('GET', `${base}?per_page=100`)).body.result_info?.total_count, (before ?? 0) + 1);
  });

  it('usage: the last 30 days by default, by date then network; since/until as dates', async () => {
    const key = (await f.call('POST', base, { body: {} })).body.result as Key;
    const today = new Date(clock.now()).toISOString().slice(0, 10);
    const day = (offset: number) => new Date(Date.parse(today) - offset * 86_400_000).toISOString().slice(0, 10);
    await addUsage(f.app.store.db, [
      { key_id: key.id, date: day(0), network: 'sepolia', requests: 3, errors: 1 },
      { key_id: key.id, date: day(0), network: 'holesky', requests: 2, errors: 0 },
      { key_id: key.id, date: day(29), network: 'sepolia', requests: 7, errors: 0 },
      { key_id: key.id, date: day(30), network: 'sepolia', requests: 100, errors: 0 },
    ]);
    // Additive: a second flush of the same row adds up.
    await addUsage(f.app.store.db, [{ key_id: key.id, date: day(0), network: 'sepolia', requests: 1, errors: 1 }]);
    const res = await f.call('GET', `${base}/${key.id}/usage`, { token: f.readToken });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.result, [
      { date: day(29), network: 'sepolia', requests: 7, errors: 0 },
      { date: day(0), network: 'holesky', requests: 2, errors: 0 },
      { date: day(0), network: 'sepolia', requests: 4, errors: 2 },
    ]);
    const window = await f.call('GET', `${base}/${key.id}/usage?since=${day(30)}&until=${day(30)}`);
    assert.deepEqual(window.body.result, [{ date: day(30), network: 'sepolia', requests: 100, errors: 0 }]);
    for (const query of [
      'since=yesterday',
      'until=2026-02-30',
      `since=${day(0)}&until=${day(1)}`,
      'since=2000-01-01',
    ]) {
      const bad = await f.call('GET', `${base}/${key.id}/usage?${query}`);
      assert.equal(bad.status, 400, query);
      assert.equal(bad.body.errors[0]?.code, 1002);
    }
    assert.equal((await f.call('GET', `${base}/${'0'.repeat(32)}/usage`)).status, 404);
  });

  it('is in the OpenAPI document', async () => {
    const res = await fetch(`${f.app.apiUrl}/openapi.json`);
    const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
    const paths = Object.keys(doc.paths).filter((path) => path.includes('/gateway/keys'));
    assert.equal(paths.length, 4);
    const one = Object.keys(doc.paths).find((path) => /gateway\/keys\/\{key_id\}$/.test(path)) as string;
    assert.deepEqual(Object.keys(doc.paths[one] ?? {}).sort(), ['delete', 'get', 'patch']);
  });
});
