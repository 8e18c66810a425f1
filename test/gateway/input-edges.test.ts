/**
 * Input the gateway refuses at its edge (SPEC §20 "Input edges"), through a real app with a pool of two
 * node:http origins that count what reaches them:
 * - a body nesting arrays and objects more than 64 levels deep (up to 200,000) is refused once, 400 /
 *   -32600 RPC_TOO_DEEP, over HTTP (single and batch) and WebSocket — and no origin sees it; 64 levels
 *   still go through;
 * - a 404 (HTTP or a WebSocket handshake) and a probe's 405 name the path but never repeat the query
 *   string (`?key=swk_…`), in the body or the headers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { fromChainTracker, post, send, startHttpServer, type TestServer } from '../helpers/http.js';

/** A marker method the origins count (a known method the gateway forwards without a params check). */
const METHOD = 'eth_call';
const SECRET = 'swk_0123456789abcdef0123456789abcdef';

/** `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":…}` whose params nest `levels` arrays. */
function nested(levels: number): string {
  return `{"jsonrpc":"2.0","id":1,"method":"${METHOD}","params":${'['.repeat(levels)}${']'.repeat(levels)}}`;
}

describe('input edges at the gateway', () => {
  const origins: TestServer[] = [];
  let app: TestApp;

  before(async () => {
    for (let i = 0; i < 2; i += 1) {
      origins.push(
        await startHttpServer((_req, res, body) => {
          const parsed = JSON.parse(body) as { id: unknown } | { id: unknown }[];
          const answer = (call: { id: unknown }) => ({ jsonrpc: '2.0', id: call.id, result: '0x' });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)));
        }),
      );
    }
    app = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
      pools: [
        poolOf(
          'p',
          origins.map((origin) => origin.url),
        ),
      ],
      gateway: { max_body_bytes: 1_000_000, cache_max_bytes: 0 },
    });
  });
  after(async () => {
    await app?.close();
    for (const origin of origins) await origin.close();
  });

  /** Calls of METHOD the origins received. */
  const atOrigins = (): number =>
    origins.flatMap((origin) => origin.received).filter((r) => !fromChainTracker(r.body) && r.body.includes(METHOD))
      .length;

  it('64 levels go through; 65 and 200,000 are refused once at the gateway and reach no origin', async () => {
    const through = await post(app.rpcUrl(), nested(64 - 1)); // the request object is level 1
    assert.equal(through.status, 200, through.text);
    assert.equal(atOrigins(), 1);
    const refusals = [
      nested(64),
      nested(200_000),
      `[${nested(64 - 2)},${nested(64 - 1)}]`, // a batch's array is a level too: the second is too deep
      `[${nested(200_000)}]`,
    ];
    for (const body of refusals) {
      const res = await post(app.rpcUrl(), body);
      assert.equal(res.status, 400, body.slice(0, 80));
      const answer = res.json<{ id: unknown; error: { code: number; message: string; data: unknown } }>();
      assert.equal(answer.error.code, -32600);
      assert.match(answer.error.message, /more than 64 levels deep; no origin was asked/);
      assert.deepEqual(answer.error.data, { max_depth: 64, request_id: res.headers['x-request-id'] });
      assert.equal(answer.id, null);
    }
    const ws = new WebSocket(app.rpcUrl().replace(/^http/, 'ws'));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const answer = new Promise<string>((resolve) => ws.once('message', (data) => resolve(String(data))));
    ws.send(nested(200_000));
    assert.match(await answer, /"code":-32600,"message":"Invalid request: the body nests arrays and objects more/);
    ws.close();
    assert.equal(atOrigins(), 1, 'no refused body reached an origin');
  });

  it('a 404 and a probe’s 405 name the path, never the query string', async () => {
    const answers = [
      await send(`${app.gatewayUrl}/v2/sepolia?key=${SECRET}#frag`, { method: 'POST', body: '{}' }),
      await send(`${app.gatewayUrl}/v1/sepolia/extra?key=${SECRET}`, { method: 'GET' }),
      await send(`${app.gatewayUrl}/healthz?key=${SECRET}`, { method: 'POST' }),
    ];
    assert.deepEqual(
      answers.map((res) => res.status),
      [404, 404, 405],
    );
    const message = (text: string | undefined): string =>
      (JSON.parse(text ?? '{}') as { error?: { message?: string } }).error?.message ?? '';
    assert.match(message(answers[0]?.text), /^No such path "\/v2\/sepolia"; send JSON-RPC/);
    assert.match(message(answers[2]?.text), /^"\/healthz" answers GET/);
    for (const res of answers) {
      const all = `${res.text}\n${JSON.stringify(res.headers)}`;
      assert.ok(!all.includes(SECRET) && !all.includes('key='), all);
    }
    const refused = await new Promise<{ status: number; body: string; headers: string }>((resolve, reject) => {
      const ws = new WebSocket(`${app.gatewayUrl.replace(/^http/, 'ws')}/nope?key=${SECRET}`);
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: JSON.stringify(res.headers) }));
      });
      ws.once('open', () => reject(new Error('the handshake to /nope was accepted')));
      ws.once('error', () => {});
    });
    assert.equal(refused.status, 404);
    assert.match(message(refused.body), /^No such path "\/nope"; WebSocket clients/);
    assert.ok(!`${refused.body}${refused.headers}`.includes(SECRET), refused.body);
  });
});
