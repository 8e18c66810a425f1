/**
 * The gateway's HTTP/1.1 behaviour through its real listener (raw sockets, a real node:http origin):
 * a curl-like Expect: 100-continue call, pipelined JSON-RPC calls answered in order, a chunked body,
 * refusals (malformed → 400 / -32600 with CORS and connection: close, chunked body over
 * max_body_bytes → 413 / -32005), and a seeded randomized run of mutated requests after which the
 * gateway still answers: every answer is a 2xx/4xx/501 JSON-RPC answer or a close, never a 500 or a crash.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { startHttpServer, type TestServer } from '../helpers/http.js';
import { INVALID, VALID } from '../http1/corpus.js';
import { mulberry32 } from '../http1/mutate.js';
import { parseResponses, RawClient, waitFor } from '../http1/raw.js';

const call = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"eth_chainId","params":[]}`;
const postRpc = (body: string, extra = '') =>
  `POST /v1/sepolia HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n${extra}\r\n${body}`;

describe('gateway HTTP/1.1 (wire listener)', () => {
  let origin: TestServer;
  let app: TestApp;
  let port: number;
  const clients: RawClient[] = [];
  const client = () => {
    const c = new RawClient(port);
    clients.push(c);
    return c;
  };

  before(async () => {
    origin = await startHttpServer((_req, res, body) => {
      const { id } = JSON.parse(body) as { id: unknown };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0xaa36a7' }));
    });
    app = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
      pools: [poolOf('p', [origin.url])],
      gateway: { max_body_bytes: 2048, cache_max_bytes: 0 },
    });
    port = Number(new URL(app.gatewayUrl).port);
  });
  after(async () => {
    for (const c of clients) c.destroy();
    await app?.close();
    await origin?.close();
  });

  it('answers 100 Continue to a curl-like call, then the JSON-RPC answer', async () => {
    const c = client();
    const body = call(7);
    await c.send(
      postRpc('', 'Expect: 100-continue\r\n').replace('Content-Length: 0', `Content-Length: ${body.length}`),
    );
    await waitFor(() => c.data.startsWith('HTTP/1.1 100 Continue\r\n\r\n'), 5_000, 'the 100');
    await c.send(body);
    const [, answer] = await c.responses(2);
    assert.equal(answer?.status, 200);
    assert.equal(answer?.body, '{"jsonrpc":"2.0","id":7,"result":"0xaa36a7"}');
    assert.equal(answer?.headers['access-control-allow-origin'], '*');
  });

  it('answers pipelined calls in order on one connection', async () => {
    const c = client();
    await c.send([1, 2, 3, 4, 5].map((id) => postRpc(call(id))).join(''));
    const answers = await c.responses(5);
    assert.deepEqual(
      answers.map((r) => (JSON.parse(r.body) as { id: number }).id),
      [1, 2, 3, 4, 5],
    );
  });

  it('reads a chunked JSON-RPC body', async () => {
    const c = client();
    const body = call(9);
    await c.send(
      'POST /v1/sepolia HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n' +
        `${(10).toString(16)}\r\n${body.slice(0, 10)}\r\n${(body.length - 10).toString(16)}\r\n${body.slice(10)}\r\n0\r\n\r\n`,
    );
    const [answer] = await c.responses(1);
    assert.equal(answer?.status, 200);
    assert.equal((JSON.parse(answer?.body ?? '') as { id: number }).id, 9);
  });

  it('refuses a malformed request with a JSON-RPC 400 / -32600, CORS, and closes', async () => {
    const c = client();
    await c.send('POST /v1/sepolia HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab');
    const [answer] = await c.responses(1);
    assert.equal(answer?.status, 400);
    assert.equal(answer?.headers.connection, 'close');
    assert.equal(answer?.headers['access-control-allow-origin'], '*');
    const error = JSON.parse(answer?.body ?? '') as { id: null; error: { code: number; message: string } };
    assert.equal(error.id, null);
    assert.equal(error.error.code, -32600);
    assert.match(error.error.message, /Content-Length/);
    await c.waitClosed();
  });

  it('refuses a chunked body growing past max_body_bytes with 413 / -32005 and closes', async () => {
    const c = client();
    const chunk = 'a'.repeat(1500);
    await c.send(
      'POST /v1/sepolia HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n' +
        `${chunk.length.toString(16)}\r\n${chunk}\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`,
    );
    const [answer] = await c.responses(1);
    assert.equal(answer?.status, 413);
    const error = JSON.parse(answer?.body ?? '') as { error: { code: number; data: { request_id?: unknown } } };
    assert.equal(error.error.code, -32005);
    const { request_id, ...data } = error.error.data;
    assert.deepEqual(data, { max_body_bytes: 2048 });
    assert.equal(typeof request_id, 'string');
    await c.waitClosed();
  });

  it('survives a seeded run of mutated requests: 2xx/4xx/501 or a close, never a 500 or a crash', async () => {
    const random = mulberry32(0x5eed);
    const corpus = [
      ...Object.values(VALID),
      ...Object.values(INVALID).map(([text]) => text),
      postRpc(call(1)),
      `${postRpc(call(2))}${postRpc(call(3))}`,
    ];
    const statuses = new Map<number, number>();
    const ITERATIONS = 150;
    for (let i = 0; i < ITERATIONS; i += 1) {
      const base = Buffer.from(corpus[Math.floor(random() * corpus.length)] as string, 'latin1');
      const bytes = mutate(base, random);
      const c = client();
      // Sent in random pieces: framing must not depend on how bytes arrive.
      let at = 0;
      while (at < bytes.length) {
        const n = 1 + Math.floor(random() * Math.max(1, bytes.length / 3));
        await c.send(bytes.subarray(at, at + n));
        at += n;
      }
      // A well-formed prefix may leave the server waiting for more: end our side to settle it.
      c.socket.end();
      await c.waitClosed(5_000);
      const { responses } = parseResponses(c.data, true);
      for (const r of responses) {
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        assert.ok(
          (r.status >= 200 && r.status < 500) || r.status === 501,
          `iteration ${i}: status ${r.status} for ${JSON.stringify(bytes.toString('latin1'))}`,
        );
      }
      c.destroy();
    }
    assert.ok((statuses.get(400) ?? 0) > 0, 'some mutations were refused as malformed');
    // Still serving.
    const c = client();
    await c.send(postRpc(call(42)));
    const [answer] = await c.responses(1);
    assert.equal(answer?.status, 200);
  });
});

const NASTY = [0x0d, 0x0a, 0x00, 0x20, 0x09, 0x3a, 0x2c, 0x3b, 0x7f, 0xff, 0x30, 0x39, 0x61, 0x2d];

/** 1–4 random edits: flip a byte, insert a nasty byte, delete a range, duplicate a range. */
function mutate(input: Buffer, random: () => number): Buffer {
  let bytes = Buffer.from(input);
  const edits = 1 + Math.floor(random() * 4);
  for (let e = 0; e < edits && bytes.length > 0; e += 1) {
    const at = Math.floor(random() * bytes.length);
    const kind = Math.floor(random() * 4);
    if (kind === 0) bytes[at] = NASTY[Math.floor(random() * NASTY.length)] as number;
    else if (kind === 1) {
      const nasty = Buffer.from([NASTY[Math.floor(random() * NASTY.length)] as number]);
      bytes = Buffer.concat([bytes.subarray(0, at), nasty, bytes.subarray(at)]);
    } else if (kind === 2) {
      bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1 + Math.floor(random() * 8))]);
    } else {
      const end = Math.min(bytes.length, at + 1 + Math.floor(random() * 40));
      bytes = Buffer.concat([bytes.subarray(0, end), bytes.subarray(at, end), bytes.subarray(end)]);
    }
  }
  return bytes;
}
