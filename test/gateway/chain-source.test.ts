/**
 * The chain tracker's source in the gateway (src/gateway/upstream/chain-source.ts) against real node:http
 * origins on free ports: what it sends (the origin's own address model, headers, Basic auth; our id),
 * what it makes of each kind of answer, and its time bound.
 */
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, describe, it } from 'node:test';
import { CHAIN_REQUEST_ID, GatewayChainSource } from '../../src/gateway/upstream/chain-source.js';
import { OriginClients } from '../../src/gateway/upstream/origin-clients.js';
import { BufferPool } from '../../src/http1/index.js';
import type { Pool } from '../../src/model/pool.js';
import { startHttpServer } from '../helpers/http.js';
import { originOf } from './origin-fixture.js';

const HASH = `0x${'ab'.repeat(32)}`;
const PARENT = `0x${'cd'.repeat(32)}`;
const header = (number: string) => ({ number, hash: HASH, parentHash: PARENT, timestamp: '0x6553f100', miner: '0x0' });

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** An origin answering each request with `answer(method, params)` as the raw HTTP body (status 200 unless given). */
async function origin(answer: (method: string, params: unknown[]) => { status?: number; body: string } | 'hang') {
  const seen: Array<{ url: string; headers: IncomingHttpHeaders; body: Record<string, unknown> }> = [];
  const server = await startHttpServer((req, res, body) => {
    const request = JSON.parse(body) as { method: string; params: unknown[] };
    seen.push({ url: req.url ?? '', headers: req.headers, body: request as unknown as Record<string, unknown> });
    const out = answer(request.method, request.params);
    if (out === 'hang') return;
    res.writeHead(out.status ?? 200, { 'content-type': 'application/json' }).end(out.body);
  });
  cleanups.push(() => server.close());
  return { server, seen };
}

function source(timeoutMs = 2_000): GatewayChainSource {
  const clients = new OriginClients({ connectionsPerOrigin: 2, connectTimeoutMs: 1_000, buffers: new BufferPool() });
  cleanups.push(() => clients.close());
  return new GatewayChainSource({ clients, timeoutMs });
}

const pool = {} as Pool;
const rpc = (result: unknown) => JSON.stringify({ jsonrpc: '2.0', id: CHAIN_REQUEST_ID, result });

describe('the gateway chain source', () => {
  it('asks for headers with the origin’s path, Basic auth and headers, under its own id', async () => {
    const o = await origin((method, params) =>
      method === 'eth_syncing' ? { body: rpc(false) } : { body: rpc(header(params[0] === 'latest' ? '0x2a' : '0x7')) },
    );
    const address = `http://user:pw@127.0.0.1:${o.server.port}/rpc/key?x=1`;
    const node = originOf(address, { 'X-Api-Key': ['k'] });
    const chain = source();
    const latest = await chain.block(pool, node, 'latest');
    assert.deepEqual(
      { number: latest?.number, hash: latest?.hash, parentHash: latest?.parentHash, timestamp: latest?.timestamp },
      { number: 42, hash: HASH, parentHash: PARENT, timestamp: 0x6553f100 },
    );
    assert.equal(latest?.header.miner, '0x0', 'the header as the origin answered it');
    assert.equal((await chain.block(pool, node, 7))?.number, 7);
    assert.equal(await chain.syncing(pool, node), false);
    assert.deepEqual(
      o.seen.map((r) => [r.body.method, r.body.params, r.body.id]),
      [
        ['eth_getBlockByNumber', ['latest', false], CHAIN_REQUEST_ID],
        ['eth_getBlockByNumber', ['0x7', false], CHAIN_REQUEST_ID],
        ['eth_syncing', [], CHAIN_REQUEST_ID],
      ],
    );
    const first = o.seen[0];
    assert.equal(first?.url, '/rpc/key?x=1');
    assert.equal(first?.headers.authorization, `Basic ${Buffer.from('user:pw').toString('base64')}`);
    assert.equal(first?.headers['x-api-key'], 'k');
  });

  it('null and error answers are "no such block"; a syncing object is true', async () => {
    const o = await origin((method, params) => {
      if (method === 'eth_syncing')
        return { body: rpc({ startingBlock: '0x0', currentBlock: '0x1', highestBlock: '0x9' }) };
      if (params[0] === 'finalized') {
        return { body: JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'unknown block' } }) };
      }
      return { body: rpc(null) };
    });
    const node = originOf(o.server.url);
    const chain = source();
    assert.equal(await chain.block(pool, node, 'finalized'), undefined);
    assert.equal(await chain.block(pool, node, 99), undefined);
    assert.equal(await chain.syncing(pool, node), true);
  });

  it('failures reject without naming the address: HTTP 5xx, not JSON, not a header, the wrong block', async () => {
    const answers: Array<{ status?: number; body: string }> = [
      { status: 503, body: 'busy' },
      { body: 'not json' },
      { body: rpc({ number: '0x1' }) },
      { body: rpc(header('0x8')) },
    ];
    const o = await origin(() => answers.shift() ?? { body: rpc(null) });
    const node = originOf(`http://secret-key@127.0.0.1:${o.server.port}/`);
    const chain = source();
    const reasons: string[] = [];
    for (let i = 0; i < 4; i++) {
      await assert.rejects(chain.block(pool, node, 7), (err: Error) => {
        reasons.push(err.message);
        return true;
      });
    }
    assert.deepEqual(reasons, [
      'HTTP 503',
      'the answer is not JSON',
      'eth_getBlockByNumber answered no block header',
      'asked for block 7, got block 8',
    ]);
    assert.ok(reasons.every((r) => !r.includes('secret') && !r.includes('127.0.0.1')));
  });

  it('an origin that never answers is given up after the timeout', async () => {
    const o = await origin(() => 'hang');
    const started = Date.now();
    await assert.rejects(source(200).block(pool, originOf(o.server.url), 'latest'), /no answer within 200 ms/);
    assert.ok(Date.now() - started < 2_000);
  });
});
