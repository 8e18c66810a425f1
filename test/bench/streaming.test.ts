import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { largeLogs } from '../../bench/payloads.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { post } from '../helpers/http.js';
import { waitFor } from './origin.js';

/**
 * Large answers (over forward.ts's STREAM_AFTER_BYTES) stream from the origin to the client: byte for
 * byte with the client's id, with or without Content-Length, also when the id comes after the result
 * (then they are collected whole); an origin failing midway cuts the client's connection instead of
 * sending a wrong answer; a client leaving midway stops the origin request.
 */

const LARGE = largeLogs(4 * 1_048_576);

type Mode = 'length' | 'chunked' | 'id-last' | 'fail-midway' | 'slow';
interface Origin {
  url: string;
  closedEarly: number;
  close(): Promise<void>;
}

async function startOrigin(mode: Mode): Promise<Origin> {
  const state = { closedEarly: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = /"id"\s*:\s*(-?\d+)/.exec(Buffer.concat(chunks).toString())?.[1] ?? 'null';
      const body =
        mode === 'id-last'
          ? Buffer.from(`{"jsonrpc":"2.0","result":${LARGE.result},"id":${id}}`)
          : Buffer.from(`{"jsonrpc":"2.0","id":${id},"result":${LARGE.result}}`);
      res.on('close', () => {
        if (!res.writableFinished) state.closedEarly += 1;
      });
      if (mode === 'length' || mode === 'id-last') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
        res.end(body);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked
      if (mode === 'chunked') {
        for (let i = 0; i < body.length; i += 100_000) res.write(body.subarray(i, i + 100_000));
        res.end();
      } else if (mode === 'fail-midway') {
        res.write(body.subarray(0, 2 * 1_048_576), () => res.destroy());
      } else {
        // slow: 64 KiB every 20 ms, until the client gives up
        let at = 0;
        const timer = setInterval(() => {
          if (res.destroyed || at >= body.length) {
            clearInterval(timer);
            if (!res.destroyed) res.end();
            return;
          }
          res.write(body.subarray(at, at + 65_536));
          at += 65_536;
        }, 20);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

const MODES: Mode[] = ['length', 'chunked', 'id-last', 'fail-midway', 'slow'];
const origins = new Map<Mode, Origin>();
let app: TestApp;

before(async () => {
  for (const mode of MODES) origins.set(mode, await startOrigin(mode));
  app = await startApp({
    networks: Object.fromEntries(MODES.map((mode) => [mode, { chain_id: 1, pools: [mode] }])),
    pools: MODES.map((mode) => poolOf(mode, [origins.get(mode)!.url])),
  });
});

after(async () => {
  await app?.close();
  for (const origin of origins.values()) await origin.close();
});

const expected = (id: string) => `{"jsonrpc":"2.0","id":${id},"result":${LARGE.result}}`;

test('a large answer streams byte for byte with the client id; Content-Length is adjusted when known', async () => {
  for (const id of ['7', '"a-much-longer-string-id"', '123456789012345678901234567890']) {
    const res = await post(app.rpcUrl('length'), LARGE.request.replace('"id":1', `"id":${id}`));
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(expected(id))));
    assert.ok(res.text === expected(id), `bytes differ for id ${id}`);
  }
});

test('a chunked large answer streams byte for byte', async () => {
  const res = await post(app.rpcUrl('chunked'), LARGE.request.replace('"id":1', '"id":"x"'));
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-length'], undefined);
  assert.ok(res.text === expected('"x"'));
});

test('a large answer with its id after the result is collected whole and still comes back exact', async () => {
  const res = await post(app.rpcUrl('id-last'), LARGE.request.replace('"id":1', '"id":42'));
  assert.equal(res.status, 200);
  assert.ok(res.text === `{"jsonrpc":"2.0","result":${LARGE.result},"id":42}`);
});

test('an origin failing midway cuts the client connection: never a complete-looking wrong answer', async () => {
  const outcome = await post(app.rpcUrl('fail-midway'), LARGE.request).then(
    (res) => res.text,
    (err: Error) => err,
  );
  // The connection is cut, or what arrived is visibly truncated, or (had it failed before streaming)
  // an error answer: never a result.
  if (typeof outcome === 'string' && isJson(outcome)) {
    assert.equal((JSON.parse(outcome) as { result?: unknown }).result, undefined, 'no result from a failed origin');
  }
  // The gateway keeps serving afterwards.
  const again = await post(app.rpcUrl('length'), LARGE.request);
  assert.equal(again.status, 200);
});

test('a client leaving midway stops the origin request', async () => {
  const origin = origins.get('slow')!;
  const url = new URL(app.rpcUrl('slow'));
  await new Promise<void>((resolve) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let seen = 0;
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen > 1_500_000) {
            req.destroy();
            resolve();
          }
        });
      },
    );
    req.on('error', () => resolve());
    req.end(LARGE.request);
  });
  await waitFor(() => origin.closedEarly > 0, 'the origin to see its request cancelled');
});

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
