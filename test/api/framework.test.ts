// The API framework on its own: envelope, routing errors, auth order, body limits, OpenAPI, metrics.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { createAccount } from '../../src/accounts/accounts.js';
import { createToken } from '../../src/accounts/tokens.js';
import { createApiServer } from '../../src/api/api-server.js';
import { parsePagination, resultInfo } from '../../src/api/pagination.js';
import { defineRoute } from '../../src/api/route-table.js';
import { userTokenRoutes } from '../../src/api/routes/user-tokens.js';
import { systemClock } from '../../src/clock.js';
import { buildConfig } from '../../src/config/load.js';
import { SwitchyardError } from '../../src/errors/base.js';
import { openTestStore } from '../helpers/store.js';
import { makeSelfSignedCert } from '../helpers/tls.js';

const ACCOUNT = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

describe('api framework', () => {
  let base = '';
  let writeToken = '';
  let readToken = '';
  let close: () => Promise<void> = async () => {};

  before(async () => {
    const opened = await openTestStore();
    await createAccount(opened.store.db, systemClock, { id: ACCOUNT, name: 'a' });
    writeToken = (await createToken(opened.store.db, systemClock, { accountId: ACCOUNT, readOnly: false })).token;
    readToken = (await createToken(opened.store.db, systemClock, { accountId: ACCOUNT, readOnly: true })).token;
    const config = buildConfig({ api: { listen: '127.0.0.1:0', max_body_bytes: 64 } }, 'test');
    const echo = defineRoute({
      method: 'POST',
      path: '/accounts/:account_id/echo',
      auth: 'write',
      summary: 'echo',
      body: z.strictObject({ name: z.string().min(1) }),
      async handler(request) {
        return { result: request.body, status: 201 };
      },
    });
    const list = defineRoute({
      method: 'GET',
      path: '/accounts/:account_id/echo',
      auth: 'read',
      summary: 'list',
      paginated: true,
      async handler(request) {
        const page = parsePagination(request.query);
        return { result: [], result_info: resultInfo(page, 0, 0) };
      },
    });
    // A failure while writing the error itself (an invalid header value): still a JSON envelope.
    const broken = defineRoute({
      method: 'GET',
      path: '/accounts/:account_id/broken',
      auth: 'read',
      summary: 'broken',
      async handler() {
        throw new SwitchyardError('API_VALIDATION', 'unsendable', { headers: { 'x-bad': 'a\nb' } });
      },
    });
    const api = createApiServer({
      config,
      store: opened.store,
      routes: [...userTokenRoutes({ store: opened.store, clock: systemClock }), echo, list, broken],
    });
    base = `${await api.listen()}/client/v4`;
    close = async () => {
      await api.close();
      await opened.close();
    };
  });
  after(() => close());

  const call = async (method: string, path: string, init: { token?: string; body?: string; type?: string } = {}) => {
    const headers: Record<string, string> = { 'x-stainless-lang': 'js', 'api-version': '2024-01-01' };
    if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
    if (init.body !== undefined) headers['content-type'] = init.type ?? 'application/json';
    const res = await fetch(`${base}${path}`, { method, headers, body: init.body });
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };
  const codes = (body: Record<string, unknown>) => (body.errors as { code: number }[]).map((e) => e.code);

  test('verify answers in the Cloudflare shape for read and write tokens', async () => {
    for (const token of [writeToken, readToken]) {
      const res = await call('GET', '/user/tokens/verify', { token });
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ['errors', 'messages', 'result', 'success']);
      assert.equal((res.body.result as { status: string }).status, 'active');
      assert.match((res.body.result as { id: string }).id, /^[0-9a-f]{32}$/);
    }
  });

  test('missing, malformed and unknown tokens are 401 / 10000', async () => {
    const missing = await call('GET', '/user/tokens/verify');
    assert.equal(missing.status, 401);
    assert.deepEqual(codes(missing.body), [10000, 9106]);
    assert.equal(missing.body.success, false);
    assert.equal(missing.body.result, null);
    const malformed = await fetch(`${base}/user/tokens/verify`, { headers: { authorization: 'Basic abc' } });
    assert.equal(malformed.status, 401);
    const unknown = await call('GET', '/user/tokens/verify', { token: `swy_${'x'.repeat(40)}` });
    assert.equal(unknown.status, 401);
    assert.deepEqual(codes(unknown.body), [10000]);
  });

  test('another account is 403 before anything else; read-only token on a write is 403', async () => {
    const other = await call('POST', '/accounts/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb/echo', {
      token: writeToken,
      body: 'not json',
    });
    assert.equal(other.status, 403);
    assert.deepEqual(codes(other.body), [10000]);
    const readOnly = await call('POST', `/accounts/${ACCOUNT}/echo`, { token: readToken, body: '{"name":"x"}' });
    assert.equal(readOnly.status, 403);
  });

  test('bodies: JSON only, size-limited, validated with the field named', async () => {
    const ok = await call('POST', `/accounts/${ACCOUNT}/echo`, { token: writeToken, body: '{"name":"x"}' });
    assert.equal(ok.status, 201);
    assert.deepEqual(ok.body.result, { name: 'x' });
    const notJsonType = await call('POST', `/accounts/${ACCOUNT}/echo`, {
      token: writeToken,
      body: '{"name":"x"}',
      type: 'text/plain',
    });
    assert.equal(notJsonType.status, 415);
    const badJson = await call('POST', `/accounts/${ACCOUNT}/echo`, { token: writeToken, body: '{' });
    assert.equal(badJson.status, 400);
    assert.deepEqual(codes(badJson.body), [1002]);
    const tooBig = await call('POST', `/accounts/${ACCOUNT}/echo`, {
      token: writeToken,
      body: JSON.stringify({ name: 'x'.repeat(100) }),
    });
    assert.equal(tooBig.status, 413);
    const unknownField = await call('POST', `/accounts/${ACCOUNT}/echo`, { token: writeToken, body: '{"nam":"x"}' });
    assert.equal(unknownField.status, 400);
    assert.match((unknownField.body.errors as { message: string }[])[0]?.message ?? '', /nam/);
    const empty = await call('POST', `/accounts/${ACCOUNT}/echo`, { token: writeToken, body: '{"name":""}' });
    assert.match((empty.body.errors as { message: string }[])[0]?.message ?? '', /^name:/);
    // "is required" only for what is absent; a value of the wrong type says what was expected.
    const message = async (body: string) =>
      (
        (await call('POST', `/accounts/${ACCOUNT}/echo`, { token: writeToken, body })).body.errors as {
          message: string;
        }[]
      )[0]?.message;
    assert.equal(await message('{}'), 'name: is required');
    assert.match((await message('{"name":5}')) ?? '', /^name: .*expected string, received number/);
    assert.match((await message('{"name":null}')) ?? '', /^name: .*expected string, received null/);
    assert.match((await message('[]')) ?? '', /^body: .*expected object, received array/);
    assert.match((await message('null')) ?? '', /^body: .*expected object, received null/);
    const noBody = await fetch(`${base}/accounts/${ACCOUNT}/echo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${writeToken}` },
    });
    assert.equal(noBody.status, 400);
    assert.equal(((await noBody.json()) as { errors: { message: string }[] }).errors[0]?.message, 'body: is required');
  });

  test('an answer that cannot be written is a 500 / 10001 envelope, not an empty 500', async () => {
    const res = await call('GET', `/accounts/${ACCOUNT}/broken`, { token: readToken });
    assert.equal(res.status, 500);
    assert.deepEqual(codes(res.body), [10001]);
    assert.equal((await call('GET', `/accounts/${ACCOUNT}/echo`, { token: readToken })).status, 200, 'still serving');
  });

  test('unknown routes are 404 / 7003, wrong methods 405 with Allow', async () => {
    const missing = await call('GET', '/nope', { token: writeToken });
    assert.equal(missing.status, 404);
    assert.deepEqual(codes(missing.body), [7003]);
    const outside = await fetch(`${base.replace('/client/v4', '')}/elsewhere`);
    assert.equal(outside.status, 404);
    const wrong = await call('DELETE', '/user/tokens/verify', { token: writeToken });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'GET');
  });

  test('pagination errors are 400 / 1002; result_info has the five fields', async () => {
    const mixed = await call('GET', `/accounts/${ACCOUNT}/echo?page=1&limit=5`, { token: readToken });
    assert.equal(mixed.status, 400);
    assert.deepEqual(codes(mixed.body), [1002]);
    const fine = await call('GET', `/accounts/${ACCOUNT}/echo?per_page=5`, { token: readToken });
    assert.deepEqual(fine.body.result_info, { page: 1, per_page: 5, count: 0, total_count: 0, total_pages: 0 });
  });

  test('the OpenAPI document lists the routes with their body schemas', async () => {
    const res = await fetch(`${base}/openapi.json`);
    assert.equal(res.status, 200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    assert.equal(doc.openapi, '3.1.0');
    const post = doc.paths['/accounts/{account_id}/echo']?.post as { requestBody: unknown };
    assert.ok(JSON.stringify(post.requestBody).includes('"name"'));
    assert.ok(doc.paths['/user/tokens/verify']?.get);
  });

  test('/metrics counts requests by route and status', async () => {
    const res = await fetch(`${base.replace('/client/v4', '')}/metrics`);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /switchyard_api_requests_total\{method="GET",route="\/user\/tokens\/verify",status="200"\} 2/);
    assert.match(text, /status="401"/);
  });
});

test('api.tls serves HTTPS with the configured certificate', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-tls-'));
  const opened = await openTestStore();
  try {
    const { cert, key } = makeSelfSignedCert(dir, '/CN=localhost', '127.0.0.1');
    const config = buildConfig({ api: { listen: '127.0.0.1:0', tls: { cert_file: cert, key_file: key } } }, 'test');
    const api = createApiServer({
      config,
      store: opened.store,
      routes: userTokenRoutes({ store: opened.store, clock: systemClock }),
    });
    const url = await api.listen();
    try {
      assert.match(url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpsRequest(`${url}/client/v4/user/tokens/verify`, { ca: readFileSync(cert) }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(status, 401);
    } finally {
      await api.close();
    }
  } finally {
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
