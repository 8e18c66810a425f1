import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { largeLogs } from '../../bench/payloads.js';
import { BufferPool } from '../../src/http1/index.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { fromChainTracker, post } from '../helpers/http.js';
import { waitFor } from './origin.js';

/**
 * Large answers (over forward.ts's STREAM_AFTER_BYTES) stream from the origin to the client: byte for
 * byte with the client's id, with or without Content-Length, also when the id comes after the result
 * (then they are collected whole); answers streaming side by side keep their own bytes (origin
 * sockets read into a shared buffer until an answer is large, then into recycled buffers); passing
 * answers through reuses those buffers rather than allocating per read; an origin failing midway cuts
 * the client's connection instead of sending a wrong answer; a client leaving midway stops the origin
 * request.
 */

const LARGE = largeLogs(4 * 1_048_576);

type Mode = 'length' | 'chunked' | 'id-last' | 'fail-midway' | 'slow' | 'distinct';
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
      // The gateway's chain tracker polls every origin: a small answer, so its reads stay out of the buffers watched here.
      if (fromChainTracker(Buffer.concat(chunks).toString())) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"jsonrpc":"2.0","id":"switchyard-chain","result":null}');
        return;
      }
      const id = /"id"\s*:\s*(-?\d+)/.exec(Buffer.concat(chunks).toString())?.[1] ?? 'null';
      const body =
        mode === 'id-last'
          ? Buffer.from(`{"jsonrpc":"2.0","result":${LARGE.result},"id":${id}}`)
          : mode === 'distinct'
            ? Buffer.from(distinct(id, /"fromBlock":"0x(\w+)"/.exec(Buffer.concat(chunks).toString())?.[1] ?? ''))
            : Buffer.from(`{"jsonrpc":"2.0","id":${id},"result":${LARGE.result}}`);
      res.on('close', () => {
        if (!res.writableFinished) state.closedEarly += 1;
      });
      if (mode === 'length' || mode === 'id-last' || mode === 'distinct') {
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

const MODES: Mode[] = ['length', 'chunked', 'id-last', 'fail-midway', 'slow', 'distinct'];

/**
 * A 12 MiB answer whose every byte after the id depends on `mark` (the request's fromBlock, which the
 * origin sees as the client sent it; the id it sees is the gateway's own). Larger than the kernel's
 * socket buffers, so the gateway's writes to a slow reader must wait; a 5-byte unit, so even a chunk
 * overwritten by the same answer's next bytes would show.
 */
function distinct(id: string, mark: string): string {
  const unit = mark.padStart(5, '0').repeat(13);
  return `{"jsonrpc":"2.0","id":${id},"result":"0x${unit.repeat(Math.ceil(12_582_912 / unit.length))}"}`;
}
const origins = new Map<Mode, Origin>();
let app: TestApp;
/** The gateway's read buffers, injected to watch their recycling. */
const buffers = new BufferPool();

before(async () => {
  for (const mode of MODES) origins.set(mode, await startOrigin(mode));
  app = await startApp(
    {
      networks: Object.fromEntries(MODES.map((mode) => [mode, { chain_id: 1, pools: [mode] }])),
      pools: MODES.map((mode) => poolOf(mode, [origins.get(mode)!.url])),
    },
    { buffers },
  );
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

test('large answers streaming side by side to slow readers each keep their own bytes (origin read buffers are shared and recycled)', async () => {
  for (const round of [0, 1]) {
    const ids = [1, 2, 3, 4].map((n) => String(n + round * 4));
    const request = (id: string) =>
      JSON.stringify({ jsonrpc: '2.0', id: Number(id), method: 'eth_getLogs', params: [{ fromBlock: `0x${id}` }] });
    // Slow readers: each client holds its answer a moment before reading, so the gateway's writes
    // queue up and complete later (a buffer recycled before its write completed would show).
    const answers = await Promise.all(ids.map((id) => slowPost(app.rpcUrl('distinct'), request(id))));
    answers.forEach((text, i) => {
      const id = ids[i] as string;
      assert.ok(text === distinct(id, id), `answer ${id} is not byte for byte its own`);
    });
  }
});

test('large answers one after another reuse the read buffers of the first instead of allocating per read', async () => {
  const pass = async (): Promise<void> => {
    const res = await post(app.rpcUrl('length'), LARGE.request);
    assert.ok(res.text === expected('1'));
  };
  await pass();
  const afterFirst = buffers.stats;
  for (let i = 0; i < 7; i += 1) await pass();
  const { created, reused } = buffers.stats;
  // Seven more 4 MiB answers read ~450 buffers' worth; recycled, they need next to no new ones.
  assert.ok(created - afterFirst.created < 16, `${created - afterFirst.created} buffers allocated for 7 more answers`);
  assert.ok(reused - afterFirst.reused > 7 * 32, `only ${reused - afterFirst.reused} reuses for 7 more answers`);
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

/** POSTs `body` and reads the answer only after holding it unread for a moment (pacing, not waiting). */
function slowPost(url: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.pause();
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(Buffer.concat(chunks).toString()));
      res.on('error', reject);
      setTimeout(() => res.resume(), 100);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
