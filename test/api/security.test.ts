// SPEC §7 on the management API: one account never sees another's data on any route (lists, references,
// health, filters); secrets — API tokens and provider keys in origin addresses — appear in no response and
// no log line; tokens are stored only as hashes; malformed and oversized input gets a clear 4xx and the
// server keeps serving.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import Cloudflare from 'cloudflare';
import { getMonitor } from '../../src/health/monitor-queries.js';
import { createLogger } from '../../src/log.js';
import { getPool } from '../../src/pools/pool-queries.js';
import { type ApiFixture, OTHER_ACCOUNT, startApiFixture } from './setup.js';

const KEY = '0123456789abcdef0123456789abcdef';
const SECRET_ADDRESS = `https://user:hunter2@rpc.example/v3/${KEY}?apikey=s3cr3t-query`;
const SECRETS = ['hunter2', KEY, 's3cr3t-query', 'hdr-secret-1', 'mon-secret-2'];
const ORIGIN_HEADER = { Host: ['rpc.example'], 'X-Api-Key': ['hdr-secret-1'] };
const MONITOR_HEADER = { Authorization: ['Bearer mon-secret-2'], 'User-Agent': ['probe'] };

describe('account isolation, secrets and hostile input', () => {
  let f: ApiFixture;
  const logs: string[] = [];
  const own = { pool: '', monitor: '' };
  const other = { pool: '', monitor: '' };
  const bodies: string[] = [];

  /** Raw request; every response body is kept so the secrets check can read all of them. */
  const raw = async (method: string, path: string, init: { token?: string; body?: string; type?: string } = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${init.token ?? f.token}` };
    if (init.body !== undefined) headers['content-type'] = init.type ?? 'application/json';
    const res = await fetch(`${f.app.apiUrl}${path}`, { method, headers, body: init.body });
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `${method} ${path}`);
    const text = await res.text();
    bodies.push(text);
    return {
      status: res.status,
      body: JSON.parse(text) as { success: boolean; errors: { code: number; message: string }[]; result: unknown },
    };
  };

  before(async () => {
    f = await startApiFixture({}, { logger: createLogger({ level: 'debug', write: (line) => logs.push(line) }) });
    for (const [token, account, ids] of [
      [f.token, f.accountId, own],
      [f.otherToken, OTHER_ACCOUNT, other],
    ] as const) {
      const monitor = await raw('POST', `/accounts/${account}/load_balancers/monitors`, {
        token,
        body: JSON.stringify({ header: MONITOR_HEADER }),
      });
      ids.monitor = (monitor.body.result as { id: string }).id;
      const pool = await raw('POST', `/accounts/${account}/load_balancers/pools`, {
        token,
        body: JSON.stringify({
          name: 'shared-name',
          origins: [{ name: 'keyed', address: SECRET_ADDRESS, header: ORIGIN_HEADER }],
          monitor: ids.monitor,
          notification_email: `${account.slice(0, 4)}@example.com`,
        }),
      });
      assert.equal(pool.status, 200, JSON.stringify(pool.body));
      ids.pool = (pool.body.result as { id: string }).id;
    }
  });
  after(() => f.close());

  test("lists, filters, references and health show only the caller's own objects", async () => {
    const base = `/accounts/${f.accountId}/load_balancers`;
    const pools = await raw('GET', `${base}/pools?per_page=1000`);
    assert.deepEqual(
      (pools.body.result as { id: string }[]).map((p) => p.id),
      [own.pool],
    );
    const monitors = await raw('GET', `${base}/monitors`);
    assert.deepEqual(
      (monitors.body.result as { id: string }[]).map((m) => m.id),
      [own.monitor],
    );
    const filtered = await raw('GET', `${base}/pools?monitor=${other.monitor}`);
    assert.deepEqual(filtered.body.result, [], "filtering by the other account's monitor finds nothing");
    const refs = await raw('GET', `${base}/monitors/${own.monitor}/references`);
    assert.deepEqual(
      (refs.body.result as { resource_id: string }[]).map((r) => r.resource_id),
      [own.pool],
    );
    const poolRefs = await raw('GET', `${base}/pools/${own.pool}/references`);
    assert.deepEqual(
      (poolRefs.body.result as { resource_id: string }[]).map((r) => r.resource_id),
      [own.monitor],
    );
    // Another account's ids under one's own account path: 404, as for ids that exist nowhere.
    for (const path of [
      `${base}/pools/${other.pool}`,
      `${base}/pools/${other.pool}/health`,
      `${base}/pools/${other.pool}/references`,
      `${base}/monitors/${other.monitor}`,
      `${base}/monitors/${other.monitor}/references`,
    ]) {
      const res = await raw('GET', path);
      assert.equal(res.status, 404, path);
      assert.equal(res.body.errors[0]?.code, 7003, path);
    }
    const bulk = await raw('PATCH', `${base}/pools?per_page=1000`, { body: '{"notification_email":""}' });
    assert.deepEqual(
      (bulk.body.result as { id: string }[]).map((p) => p.id),
      [own.pool],
    );
    const theirs = await raw('GET', `/accounts/${OTHER_ACCOUNT}/load_balancers/pools/${other.pool}`, {
      token: f.otherToken,
    });
    assert.equal(
      (theirs.body.result as { notification_email: string }).notification_email,
      `${OTHER_ACCOUNT.slice(0, 4)}@example.com`,
      "a bulk PATCH never touches another account's pools",
    );
  });

  test("another account's monitor cannot be attached, and the refusal does not say whether it exists", async () => {
    const base = `/accounts/${f.accountId}/load_balancers/pools`;
    const attach = async (monitor: string) => {
      const res = await raw('POST', base, {
        body: JSON.stringify({ name: 'steal', origins: [{ name: 'o', address: 'h:1' }], monitor }),
      });
      assert.equal(res.status, 400);
      return (res.body.errors[0]?.message ?? '').replace(monitor, '<id>');
    };
    assert.equal(await attach(other.monitor), await attach('e'.repeat(32)));
  });

  test('keys in origin addresses and credential headers are masked in every answer; GET → PUT keeps them', async () => {
    const path = `/accounts/${f.accountId}/load_balancers/pools/${own.pool}`;
    const got = await raw('GET', path);
    const origin = (got.body.result as { origins: { address: string; header: unknown }[] }).origins[0];
    assert.equal(origin?.address, 'https://***:***@rpc.example/v3/***?apikey=***');
    assert.deepEqual(origin?.header, { Host: ['rpc.example'], 'X-Api-Key': ['***'] });
    const health = await raw('GET', `${path}/health`);
    assert.ok(JSON.stringify(health.body).includes('https://***:***@rpc.example/v3/***?apikey=***'));
    const put = await raw('PUT', path, { body: JSON.stringify(got.body.result) });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const stored = await getPool(f.app.store.db, f.app.secrets, f.accountId, own.pool);
    assert.equal(stored?.origins[0]?.address, SECRET_ADDRESS, 'the real address is still stored');
    assert.deepEqual(stored?.origins[0]?.header['X-Api-Key'], ['hdr-secret-1'], 'the real header value too');
    const invent = await raw('PATCH', path, {
      body: JSON.stringify({
        origins: [{ name: 'keyed', address: SECRET_ADDRESS, header: { 'X-Auth-Token': ['***'] } }],
      }),
    });
    assert.equal(invent.status, 400, 'a masked value with nothing stored behind it is refused');
    assert.match(invent.body.errors[0]?.message ?? '', /^origins\.0\.header\.X-Auth-Token:/);

    const monitorPath = `/accounts/${f.accountId}/load_balancers/monitors/${own.monitor}`;
    const monitor = await raw('GET', monitorPath);
    assert.deepEqual((monitor.body.result as { header: unknown }).header, {
      Authorization: ['***'],
      'User-Agent': ['probe'],
    });
    for (const method of ['PUT', 'PATCH']) {
      const back = await raw(method, monitorPath, {
        body: JSON.stringify({ ...(monitor.body.result as object), interval: 30 }),
      });
      assert.equal(back.status, 200, JSON.stringify(back.body));
    }
    const kept = await getMonitor(f.app.store.db, f.app.secrets, f.accountId, own.monitor);
    assert.deepEqual(kept?.header.Authorization, ['Bearer mon-secret-2'], 'the monitor keeps its real Authorization');
    const fresh = await raw('POST', `/accounts/${f.accountId}/load_balancers/monitors`, {
      body: JSON.stringify({ header: { Authorization: ['***'] } }),
    });
    assert.equal(fresh.status, 400);
  });

  test('NUL characters (which PostgreSQL text cannot hold) are refused alike on every route and backend', async () => {
    const base = `/accounts/${f.accountId}/load_balancers`;
    const origin = { name: 'o', address: 'h:1' };
    for (const body of [
      { name: 'nul', origins: [origin], monitor: '\u0000' },
      { name: 'n\u0000l', origins: [origin] },
      { name: 'nul', origins: [{ name: 'o\u0000', address: 'h:1' }] },
      { name: 'nul', origins: [origin], description: 'a\u0000b' },
      { name: 'nul', origins: [origin], 'x\u0000': 1 },
    ]) {
      const res = await raw('POST', `${base}/pools`, { body: JSON.stringify(body) });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.errors[0]?.code, 1002);
    }
    const monitor = await raw('POST', `${base}/monitors`, { body: JSON.stringify({ description: '\u0000' }) });
    assert.equal(monitor.status, 400);
    for (const path of [
      `${base}/pools?monitor=%00`,
      `${base}/pools?page=1&x=%00`,
      `/accounts/${f.accountId}/alerting/v3/history?since=%00`,
    ]) {
      const res = await raw('GET', path);
      assert.equal(res.status, 400, path);
      assert.match(res.body.errors[0]?.message ?? '', /^query:/);
    }
    for (const path of [
      `${base}/pools/%00`,
      `/accounts/${f.accountId}/alerting/v3/policies/%00`,
      `/accounts/${f.accountId}/alerting/v3/destinations/webhooks/a%00b`,
    ]) {
      const res = await raw('GET', path);
      assert.equal(res.status, 404, path);
      assert.equal(res.body.errors[0]?.code, 7003, path);
    }
    const policy = await raw('POST', `/accounts/${f.accountId}/alerting/v3/policies`, {
      body: JSON.stringify({
        name: 'x\u0000',
        alert_type: 'load_balancing_health_alert',
        enabled: true,
        mechanisms: { email: [{ id: 'a@example.com' }] },
      }),
    });
    assert.equal(policy.status, 400);
    // The escaped text "\\u0000" (a backslash, then u0000) is no NUL and is fine.
    const escaped = await raw('POST', `${base}/monitors`, { body: JSON.stringify({ description: '\\u0000' }) });
    assert.equal(escaped.status, 200);
    assert.equal((await raw('DELETE', `${base}/monitors/${(escaped.body.result as { id: string }).id}`)).status, 200);
  });

  test('tokens are stored only as SHA-256 hashes', async () => {
    const rows = await f.app.store.db.selectFrom('api_tokens').selectAll().execute();
    const dump = JSON.stringify(rows);
    for (const token of [f.token, f.readToken, f.otherToken]) {
      assert.ok(!dump.includes(token), 'no token in clear in the store');
      assert.ok(rows.some((row) => row.token_hash === createHash('sha256').update(token).digest('hex')));
    }
    const sdk = new Cloudflare({ apiToken: f.readToken, baseURL: f.app.apiUrl, maxRetries: 0 });
    const verified = await sdk.user.tokens.verify();
    assert.equal(verified.status, 'active');
    assert.match(verified.id, /^[0-9a-f]{32}$/);
  });

  test('malformed, oversized and odd input: 4xx in the envelope, and the server keeps answering', async () => {
    const base = `/accounts/${f.accountId}/load_balancers/pools`;
    const cases: [string, string | undefined, number][] = [
      ['{"name": "x", "origins": [', undefined, 400],
      ['\uFEFF{}', undefined, 400],
      ['{"name": "x"}garbage', undefined, 400],
      ['1e999999', undefined, 400],
      [`${'['.repeat(50_000)}${']'.repeat(50_000)}`, undefined, 400],
      ['{"name":"x","origins":[{"name":"o","address":"h:1"}],"__proto__":{"admin":true}}', undefined, 400],
      ['{"name":"x","origins":[{"name":"o","address":"h:1","constructor":{"prototype":{}}}]}', undefined, 400],
      ['{}', 'text/plain', 415],
      ['{}', 'application/x-www-form-urlencoded', 415],
      [
        JSON.stringify({
          name: 'big',
          origins: [{ name: 'o', address: 'h:1' }],
          description: 'x'.repeat(2 * 1024 * 1024),
        }),
        undefined,
        413,
      ],
    ];
    for (const [body, type, status] of cases) {
      const res = await raw('POST', base, { body, ...(type === undefined ? {} : { type }) });
      assert.equal(res.status, status, body.slice(0, 60));
      assert.equal(res.body.success, false);
    }
    for (const query of [
      'page[]=1',
      'per_page=%00',
      'per_page=%20%31',
      'page=1e2',
      'page=0x10',
      'limit=-0',
      `page=${'9'.repeat(5000)}`,
    ]) {
      const res = await raw('GET', `${base}?${query}`);
      assert.ok(res.status === 200 || res.status === 400, `${query}: ${res.status}`);
      if (res.status === 400) assert.equal(res.body.errors[0]?.code, 1002);
    }
    // A request line the URL parser cannot read on its own (no leading slash): still an envelope.
    const odd = await new Promise<{ status: number; type: string }>((resolve, reject) => {
      const url = new URL(f.app.apiUrl);
      const req = request({ host: url.hostname, port: url.port, path: '*', method: 'GET' }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']) });
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(odd.status, 404);
    assert.match(odd.type, /^application\/json/);
    assert.equal((await raw('GET', base)).status, 200, 'still serving');
    assert.equal(
      (await f.app.store.db.selectFrom('pools').select('name').where('account_id', '=', f.accountId).execute()).length,
      1,
      'nothing was created by refused requests',
    );
  });

  test('no secret in any response body or log line', () => {
    const tokens = [f.token, f.readToken, f.otherToken];
    for (const secret of [...SECRETS, ...tokens]) {
      assert.ok(!bodies.some((body) => body.includes(secret)), `a response contains ${secret.slice(0, 6)}…`);
      assert.ok(!logs.some((line) => line.includes(secret)), `a log line contains ${secret.slice(0, 6)}…`);
    }
    assert.ok(logs.length > 0, 'the debug log was captured');
  });
});
