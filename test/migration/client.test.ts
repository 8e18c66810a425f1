/** The migration's v4 client against a scripted node:http server: envelope, error messages, retries. */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { V4ApiError, V4Client } from '../../src/cli/migrate-notifications/v4-client.js';
import { ManualClock } from '../../src/clock.js';

type Answer = { status: number; body: string; headers?: Record<string, string> };
const script: Answer[] = [];
const seen: Array<{ method: string; url: string; auth: string | undefined; body: string }> = [];
let server: Server;
let baseUrl: string;

const json = (status: number, value: unknown, headers?: Record<string, string>): Answer => ({
  status,
  body: JSON.stringify(value),
  headers: { 'content-type': 'application/json', ...headers },
});
const failure = (status: number, code: number, message: string, headers?: Record<string, string>): Answer =>
  json(status, { success: false, errors: [{ code, message }], messages: [], result: null }, headers);

before(async () => {
  server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    seen.push({ method: req.method ?? '', url: req.url ?? '', auth: req.headers.authorization, body });
    const answer = script.shift() ?? failure(500, 10001, 'script exhausted');
    res.writeHead(answer.status, answer.headers ?? {});
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/client/v4/`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

function client(): { client: V4Client; sleeps: number[] } {
  const sleeps: number[] = [];
  const c = new V4Client({
    baseUrl,
    token: 'secret-token',
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    clock: new ManualClock('2030-01-01T00:00:00Z'),
  });
  return { client: c, sleeps };
}

test('unwraps the envelope and sends the bearer token, query and JSON body', async () => {
  script.push(json(200, { success: true, errors: [], messages: [], result: [{ id: 'a' }], result_info: { page: 2 } }));
  const { client: c } = client();
  const { result, resultInfo } = await c.patch(
    '/accounts/x/load_balancers/pools',
    { notification_email: '' },
    { page: 2, per_page: 10 },
  );
  assert.deepEqual(result, [{ id: 'a' }]);
  assert.deepEqual(resultInfo, { page: 2 });
  const request = seen.at(-1)!;
  assert.equal(request.method, 'PATCH');
  assert.equal(request.url, '/client/v4/accounts/x/load_balancers/pools?page=2&per_page=10');
  assert.equal(request.auth, 'Bearer secret-token');
  assert.equal(request.body, '{"notification_email":""}');
});

test('errors carry the v4 code, message and HTTP status, never the token', async () => {
  script.push(failure(403, 10000, 'Authentication error'));
  const { client: c, sleeps } = client();
  const err = await c.get('/accounts/x/load_balancers/pools').catch((e: unknown) => e);
  assert.ok(err instanceof V4ApiError);
  assert.match(
    err.message,
    /^API error 10000: Authentication error \(HTTP 403\) on GET \/client\/v4\/accounts\/x\/load_balancers\/pools$/,
  );
  assert.equal(err.code, 10000);
  assert.doesNotMatch(err.message, /secret-token/);
  assert.deepEqual(sleeps, [], '4xx is not retried');

  script.push({ status: 502, body: '<html>bad gateway</html>', headers: { 'content-type': 'text/html' } });
  script.push({ status: 200, body: 'not json' });
  const text = await new V4Client({ baseUrl, token: 't', retries: 1, sleep: async () => {} })
    .get('/x')
    .catch((e: unknown) => e as Error);
  assert.match(String(text), /unexpected answer that is not a v4 envelope: not json \(HTTP 200\)/);
});

test('429 and 5xx are retried with back-off; Retry-After wins', async () => {
  script.push(failure(503, 10001, 'busy'));
  script.push(failure(429, 10429, 'slow down', { 'retry-after': '3' }));
  script.push(failure(500, 10001, 'oops', { 'retry-after': 'Tue, 01 Jan 2030 00:00:05 GMT' }));
  script.push(json(200, { success: true, errors: [], messages: [], result: { ok: 1 } }));
  const { client: c, sleeps } = client();
  const { result } = await c.get('/thing');
  assert.deepEqual(result, { ok: 1 });
  assert.deepEqual(sleeps, [500, 3000, 5000]);
});

test('a POST is retried on 429 but not on 5xx, which may have been applied', async () => {
  script.push(failure(429, 10429, 'slow down'));
  script.push(failure(500, 10001, 'oops'));
  const { client: c, sleeps } = client();
  const err = await c.post('/policies', { name: 'x' }).catch((e: unknown) => e);
  assert.ok(err instanceof V4ApiError);
  assert.equal(err.maybeApplied, true);
  assert.equal(err.status, 500);
  assert.deepEqual(sleeps, [500]);
});

test('an API that is not listening: clear message after the retries', async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const sleeps: number[] = [];
  const c = new V4Client({
    baseUrl: `http://127.0.0.1:${port}/client/v4`,
    token: 't',
    sleep: async (ms) => void sleeps.push(ms),
  });
  await assert.rejects(
    c.get('/accounts/x/load_balancers/pools'),
    /cannot reach the API \(GET \/client\/v4\/accounts\/x\/load_balancers\/pools\): ECONNREFUSED/,
  );
  assert.equal(sleeps.length, 4);
});
