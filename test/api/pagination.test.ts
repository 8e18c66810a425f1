// Seed §4.2–4.3 with 63 pools created in random order: every pagination form of the list, page
// boundaries, past-the-end, bad parameters; then the bulk PATCH page by page (SDK and raw).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ApiFixture, startApiFixture } from './setup.js';

const STEMS = ['alpha', 'Beta', 'gamma_', 'delta-', 'Zeta', 'a', 'A-', 'z_9'];
const NAMES = Array.from({ length: 63 }, (_, i) => `${STEMS[i % STEMS.length]}${String(i).padStart(2, '0')}`);
/** Bytewise order, which the API promises on both backends. */
const SORTED = [...NAMES].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
const EMAIL = (name: string) => (NAMES.indexOf(name) % 3 === 0 ? '' : `${name.toLowerCase()}@example.com`);

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

describe('pagination of list and bulk PATCH over 63 pools', () => {
  let f: ApiFixture;
  let base = '';
  type PoolLite = { id: string; name: string; notification_email: string; modified_on: string };
  const names = (result: unknown) => (result as PoolLite[]).map((pool) => pool.name);
  const listAll = async () => {
    const res = await f.call('GET', `${base}?per_page=1000`);
    return res.body.result as PoolLite[];
  };

  before(async () => {
    f = await startApiFixture();
    base = `/accounts/${f.accountId}/load_balancers/pools`;
    for (const name of shuffled(NAMES)) {
      const res = await f.call('POST', base, {
        body: { name, origins: [{ name: 'o', address: '127.0.0.1:1' }], notification_email: EMAIL(name) },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body.errors));
    }
  });
  after(() => f.close());

  test('default page: the first 25 by name', async () => {
    const res = await f.call('GET', base);
    assert.equal(res.status, 200);
    assert.deepEqual(names(res.body.result), SORTED.slice(0, 25));
    assert.deepEqual(res.body.result_info, { page: 1, per_page: 25, count: 25, total_count: 63, total_pages: 3 });
  });

  const cases: [string, string[], { page: number; per_page: number; count: number; total_pages: number }][] = [
    ['page=2', SORTED.slice(25, 50), { page: 2, per_page: 25, count: 25, total_pages: 3 }],
    ['page=3', SORTED.slice(50), { page: 3, per_page: 25, count: 13, total_pages: 3 }],
    ['page=4', [], { page: 4, per_page: 25, count: 0, total_pages: 3 }],
    ['page=99&per_page=1000', [], { page: 99, per_page: 1000, count: 0, total_pages: 1 }],
    ['per_page=30', SORTED.slice(0, 30), { page: 1, per_page: 30, count: 30, total_pages: 3 }],
    ['page=7&per_page=10', SORTED.slice(60), { page: 7, per_page: 10, count: 3, total_pages: 7 }],
    ['page=2&per_page=62', SORTED.slice(62), { page: 2, per_page: 62, count: 1, total_pages: 2 }],
    ['per_page=63', SORTED, { page: 1, per_page: 63, count: 63, total_pages: 1 }],
    ['per_page=1000', SORTED, { page: 1, per_page: 1000, count: 63, total_pages: 1 }],
    ['per_page=1', SORTED.slice(0, 1), { page: 1, per_page: 1, count: 1, total_pages: 63 }],
    ['limit=10', SORTED.slice(0, 10), { page: 1, per_page: 10, count: 10, total_pages: 7 }],
    ['offset=25', SORTED.slice(25, 50), { page: 2, per_page: 25, count: 25, total_pages: 3 }],
    ['limit=25&offset=50', SORTED.slice(50), { page: 3, per_page: 25, count: 13, total_pages: 3 }],
    ['limit=10&offset=60', SORTED.slice(60), { page: 7, per_page: 10, count: 3, total_pages: 7 }],
    ['limit=10&offset=5', SORTED.slice(5, 15), { page: 1, per_page: 10, count: 10, total_pages: 7 }],
    ['limit=10&offset=63', [], { page: 7, per_page: 10, count: 0, total_pages: 7 }],
    ['offset=1000', [], { page: 41, per_page: 25, count: 0, total_pages: 3 }],
  ];
  for (const [query, expected, info] of cases) {
    test(`list ?${query}`, async () => {
      const res = await f.call('GET', `${base}?${query}`);
      assert.equal(res.status, 200);
      assert.deepEqual(names(res.body.result), expected);
      assert.deepEqual(res.body.result_info, { ...info, total_count: 63 });
    });
  }

  test('pages line up: walking every page visits each pool once, in order', async () => {
    for (const size of [7, 25]) {
      const seen: string[] = [];
      for (let page = 1; ; page++) {
        const res = await f.call('GET', `${base}?page=${page}&per_page=${size}`);
        const got = names(res.body.result);
        if (got.length === 0) break;
        seen.push(...got);
      }
      assert.deepEqual(seen, SORTED);
    }
  });

  test('the SDK list reads one page; { query: { page, per_page } } picks it', async () => {
    const first = await f.sdk.loadBalancers.pools.list({ account_id: f.accountId });
    assert.deepEqual(
      first.result.map((pool) => pool.name),
      SORTED.slice(0, 25),
    );
    const third = await f.sdk.loadBalancers.pools.list(
      { account_id: f.accountId },
      { query: { page: 3, per_page: 25 } },
    );
    assert.deepEqual(
      third.result.map((pool) => pool.name),
      SORTED.slice(50),
    );
    const past = await f.sdk.loadBalancers.pools.list({ account_id: f.accountId }, { query: { page: 4 } });
    assert.deepEqual(past.result, []);
  });

  const BAD = [
    'page=0',
    'page=-1',
    'page=abc',
    'page=1.5',
    'page=',
    'page=1&page=2',
    'per_page=0',
    'per_page=1001',
    'per_page=1e3',
    'limit=0',
    'limit=1001',
    'offset=-1',
    'offset=x',
    'page=1&offset=0',
    'per_page=5&limit=5',
    'page=2&limit=5',
    'page=99999999999',
  ];
  test('bad pagination parameters are 400 / 1002 naming the parameter, for list and bulk PATCH', async () => {
    for (const query of BAD) {
      for (const method of ['GET', 'PATCH']) {
        const body = method === 'PATCH' ? { notification_email: '' } : undefined;
        const res = await f.call(method, `${base}?${query}`, { body });
        assert.equal(res.status, 400, `${method} ?${query}`);
        assert.equal(res.body.success, false);
        assert.equal(res.body.errors[0]?.code, 1002, `${method} ?${query}`);
        const param = query.split('=')[0] as string;
        assert.match(res.body.errors[0]?.message ?? '', new RegExp(`${param}|pagination`), query);
      }
    }
    const after = await listAll();
    assert.deepEqual(
      after.map((pool) => pool.notification_email),
      SORTED.map(EMAIL),
      'refused bulk PATCHes changed nothing',
    );
  });

  test('refused bulk PATCH bodies change nothing', async () => {
    const before = await listAll();
    const bodies: unknown[] = [
      { notification_email: 'ops@example.com' },
      { notification_email: ' ' },
      { notification_email: null },
      {},
      { notification_email: '', enabled: false },
      { name: 'x' },
      [],
      'not json',
      '""',
    ];
    for (const body of bodies) {
      const res = await f.call('PATCH', base, { body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.errors[0]?.code, 1002, JSON.stringify(body));
    }
    const empty = await fetch(`${f.app.apiUrl}${base}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${f.token}` },
    });
    assert.equal(empty.status, 400);
    const text = await fetch(`${f.app.apiUrl}${base}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${f.token}`, 'content-type': 'text/plain' },
      body: '{"notification_email":""}',
    });
    assert.equal(text.status, 415);
    assert.deepEqual(await listAll(), before);
  });

  test('bulk PATCH: the default page is the first 25 by name, then the remaining pages', async () => {
    const emailsNow = async () => new Map((await listAll()).map((pool) => [pool.name, pool.notification_email]));

    // SDK without query: first 25 by name, nothing else.
    const first = await f.sdk.loadBalancers.pools.bulkEdit({ account_id: f.accountId, notification_email: '' });
    assert.deepEqual(
      first.result.map((pool) => pool.name),
      SORTED.slice(0, 25),
    );
    assert.ok(first.result.every((pool) => pool.notification_email === ''));
    let emails = await emailsNow();
    for (const [i, name] of SORTED.entries()) {
      assert.equal(emails.get(name), i < 25 ? '' : EMAIL(name), name);
    }

    // SDK with { query: { page: 2, per_page: 25 } }: exactly the second page.
    const second = await f.sdk.loadBalancers.pools.bulkEdit(
      { account_id: f.accountId, notification_email: '' },
      { query: { page: 2, per_page: 25 } },
    );
    assert.deepEqual(
      second.result.map((pool) => pool.name),
      SORTED.slice(25, 50),
    );
    emails = await emailsNow();
    for (const [i, name] of SORTED.entries()) {
      assert.equal(emails.get(name), i < 50 ? '' : EMAIL(name), name);
    }

    // Raw limit/offset for the rest, with result_info.
    const rest = await f.call('PATCH', `${base}?limit=25&offset=50`, { body: { notification_email: '' } });
    assert.equal(rest.status, 200);
    assert.deepEqual(names(rest.body.result), SORTED.slice(50));
    assert.deepEqual(rest.body.result_info, { page: 3, per_page: 25, count: 13, total_count: 63, total_pages: 3 });
    emails = await emailsNow();
    assert.ok([...emails.values()].every((email) => email === ''));

    const past = await f.call('PATCH', `${base}?page=4`, { body: { notification_email: '' } });
    assert.equal(past.status, 200);
    assert.deepEqual(past.body.result, []);
    assert.equal(past.body.result_info?.total_count, 63);
  });
});
