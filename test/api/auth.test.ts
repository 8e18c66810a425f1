// Authentication and account scoping for every route, table-driven from the served OpenAPI document (so
// a route added later is covered automatically): 401 / 10000 for missing, malformed and unknown tokens;
// 403 / 10000 for another account's paths (identical whether the object exists or not), and for a
// read-only token on a write. Refused requests change nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ApiFixture, OTHER_ACCOUNT, startApiFixture } from './setup.js';

interface Operation {
  method: string;
  template: string;
  write: boolean;
}

describe('auth on every route', () => {
  let f: ApiFixture;
  let operations: Operation[] = [];
  const own: Record<string, string> = {};
  const other: Record<string, string> = {};

  before(async () => {
    f = await startApiFixture();
    const doc = (await (await fetch(`${f.app.apiUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { security?: unknown[]; description?: string }>>;
    };
    for (const [template, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        if (Array.isArray(op.security) && op.security.length === 0) continue; // public (openapi.json)
        operations.push({ method: method.toUpperCase(), template, write: method !== 'get' });
      }
    }
    operations = operations.sort((a, b) => `${a.template} ${a.method}`.localeCompare(`${b.template} ${b.method}`));
    const make = async (token: string, account: string, ids: Record<string, string>) => {
      const monitor = await f.call('POST', `/accounts/${account}/load_balancers/monitors`, { token, body: {} });
      ids.monitor_id = (monitor.body.result as { id: string }).id;
      const pool = await f.call('POST', `/accounts/${account}/load_balancers/pools`, {
        token,
        body: { name: 'p', origins: [{ name: 'o', address: 'origin.invalid:1' }], monitor: ids.monitor_id },
      });
      ids.pool_id = (pool.body.result as { id: string }).id;
      ids.account_id = account;
    };
    await make(f.token, f.accountId, own);
    await make(f.otherToken, OTHER_ACCOUNT, other);
  });
  after(() => f.close());

  const fill = (template: string, ids: Record<string, string>) =>
    template.replace(/\{([a-z_]+)\}/g, (_m, name: string) => ids[name] ?? 'f'.repeat(32));
  const send = async (op: Operation, path: string, authorization: string | null) => {
    const headers: Record<string, string> = {};
    if (authorization !== null) headers.authorization = authorization;
    if (op.write) headers['content-type'] = 'application/json';
    const res = await fetch(`${f.app.apiUrl}${path}`, {
      method: op.method,
      headers,
      body: op.write ? '{}' : undefined,
    });
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    return { status: res.status, body: (await res.json()) as { success: boolean; errors: { code: number }[] } };
  };
  const expect = (
    res: { status: number; body: { success: boolean; errors: { code: number }[] } },
    status: number,
    what: string,
  ) => {
    assert.equal(res.status, status, what);
    assert.equal(res.body.success, false, what);
    assert.equal(res.body.errors[0]?.code, 10000, what);
  };

  test('the table covers the pools, monitors and token routes', () => {
    const listed = new Set(operations.map((op) => `${op.method} ${op.template}`));
    for (const expected of [
      'GET /user/tokens/verify',
      'GET /accounts/{account_id}/load_balancers/pools',
      'PATCH /accounts/{account_id}/load_balancers/pools',
      'POST /accounts/{account_id}/load_balancers/pools',
      'GET /accounts/{account_id}/load_balancers/pools/{pool_id}',
      'PUT /accounts/{account_id}/load_balancers/pools/{pool_id}',
      'PATCH /accounts/{account_id}/load_balancers/pools/{pool_id}',
      'DELETE /accounts/{account_id}/load_balancers/pools/{pool_id}',
      'GET /accounts/{account_id}/load_balancers/pools/{pool_id}/health',
      'GET /accounts/{account_id}/load_balancers/pools/{pool_id}/references',
      'GET /accounts/{account_id}/load_balancers/monitors',
      'POST /accounts/{account_id}/load_balancers/monitors',
      'GET /accounts/{account_id}/load_balancers/monitors/{monitor_id}',
      'PUT /accounts/{account_id}/load_balancers/monitors/{monitor_id}',
      'PATCH /accounts/{account_id}/load_balancers/monitors/{monitor_id}',
      'DELETE /accounts/{account_id}/load_balancers/monitors/{monitor_id}',
      'GET /accounts/{account_id}/load_balancers/monitors/{monitor_id}/references',
    ]) {
      assert.ok(listed.has(expected), expected);
    }
  });

  test('missing, malformed and unknown tokens: 401 / 10000 on every route', async () => {
    for (const op of operations) {
      const path = fill(op.template, own);
      const what = `${op.method} ${op.template}`;
      const missing = await send(op, path, null);
      expect(missing, 401, `${what} without a token`);
      assert.ok(
        missing.body.errors.some((e) => e.code === 9106),
        `${what}: 9106 for a missing header`,
      );
      expect(await send(op, path, 'Basic dXNlcjpwYXNz'), 401, `${what} with Basic auth`);
      expect(await send(op, path, 'Bearer'), 401, `${what} with an empty bearer`);
      expect(await send(op, path, 'Bearer not a token'), 401, `${what} with a malformed token`);
      expect(await send(op, path, `Bearer swy_${'A'.repeat(40)}`), 401, `${what} with an unknown token`);
    }
  });

  test("another account's paths: 403 / 10000, the same whether the object exists or not", async () => {
    for (const op of operations) {
      if (!op.template.includes('{account_id}')) continue;
      const what = `${op.method} ${op.template}`;
      const existing = await send(op, fill(op.template, other), `Bearer ${f.token}`);
      expect(existing, 403, `${what} on the other account's objects`);
      const missing = await send(op, fill(op.template, { account_id: OTHER_ACCOUNT }), `Bearer ${f.token}`);
      expect(missing, 403, `${what} on ids that do not exist`);
      assert.deepEqual(existing.body, missing.body, `${what}: no hint whether the object exists`);
      const unknownAccount = await send(op, fill(op.template, { account_id: 'e'.repeat(32) }), `Bearer ${f.token}`);
      assert.deepEqual(unknownAccount.body, missing.body, `${what}: no hint whether the account exists`);
      expect(await send(op, fill(op.template, own), `Bearer ${f.otherToken}`), 403, `${what} with the other token`);
    }
  });

  test('a read-only token reads but never writes', async () => {
    for (const op of operations) {
      const what = `${op.method} ${op.template}`;
      const res = await send(op, fill(op.template, own), `Bearer ${f.readToken}`);
      if (op.write) expect(res, 403, `${what} with a read-only token`);
      else assert.ok(res.status !== 401 && res.status !== 403, `${what} is readable with a read-only token`);
    }
  });

  test('refused requests changed nothing', async () => {
    for (const [token, ids] of [
      [f.token, own],
      [f.otherToken, other],
    ] as const) {
      const pool = await f.call('GET', `/accounts/${ids.account_id}/load_balancers/pools/${ids.pool_id}`, { token });
      assert.equal(pool.status, 200);
      const result = pool.body.result as { name: string; created_on: string; modified_on: string };
      assert.equal(result.name, 'p');
      assert.equal(result.modified_on, result.created_on);
      const monitor = await f.call('GET', `/accounts/${ids.account_id}/load_balancers/monitors/${ids.monitor_id}`, {
        token,
      });
      assert.equal(monitor.status, 200);
    }
  });
});
