/**
 * What a missing-data answer teaches the tracker: pruned state always teaches the origin's earliest block;
 * an unknown block teaches it only below the origin's known head (above it, or with no head known, the
 * origin may just be behind). Either way the call goes on to the next origin. Answers that are not what
 * was asked (SPEC §20): a lookup by hash answered with another hash, a head above the head ceiling, a
 * head above the network head from an origin whose claim the tracker refused.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChainFeedback, ChainView } from '../../chain/types.js';
import { poolFromConfig } from '../../routing/static-directory.js';
import type { UpstreamReply } from '../rpc/forwarder.js';
import { judgeAnswer } from './answer-checks.js';

const pool = poolFromConfig(
  { name: 'p', origins: [{ name: 'o', address: 'http://127.0.0.1:1' }] },
  '0123456789abcdef0123456789abcdef',
  '2026-01-01T00:00:00.000Z',
);
const candidate = { pool, origin: pool.origins[0] as (typeof pool.origins)[number] };

function errorReply(message: string): UpstreamReply {
  const body = Buffer.from(`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":${JSON.stringify(message)}}}`);
  const start = body.indexOf('{"code"');
  return {
    body,
    id: { start: 23, end: 24 },
    pool: 'p',
    origin: 'o',
    outcome: { key: 'error', value: { kind: 'object', start, end: body.length - 1 } },
  };
}

function resultReply(result: unknown): UpstreamReply {
  const text = JSON.stringify(result);
  const body = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":${text}}`);
  const start = body.indexOf(text);
  const kind = result === null ? 'null' : typeof result === 'string' ? 'string' : 'object';
  return {
    body,
    id: { start: 23, end: 24 },
    pool: 'p',
    origin: 'o',
    outcome: { key: 'result', value: { kind, start, end: start + text.length } },
  };
}

function chain(head: number | undefined, ceiling?: number, refused = false) {
  const lacks: number[] = [];
  const reported: number[] = [];
  const view: ChainView & ChainFeedback = {
    networkHead: () => head,
    origin: () => ({ head, hash: undefined, earliest: 0, syncing: false, refused }),
    reportedHead: () => undefined,
    headCeiling: () => ceiling,
    sawHead: () => undefined,
    lacksBlock: (_pool, _origin, n) => lacks.push(n),
    reported: (_network, n) => reported.push(n),
  };
  return { view, lacks, reported };
}

const context = {
  network: 'n',
  method: 'eth_getBalance',
  params: ['0x01', '0x5'],
  needs: { kind: 'block', from: 5, to: 5 } as const,
  candidate,
};

describe('missing-data answers and the earliest block', () => {
  it('pruned state teaches lacking block 5, even with no head known', () => {
    for (const head of [undefined, 10]) {
      const { view, lacks } = chain(head);
      assert.equal(judgeAnswer(view, context, errorReply('missing trie node abc (path )')), 'missing');
      assert.deepEqual(lacks, [5]);
    }
  });

  it('an unknown block teaches only below a known head', () => {
    for (const [head, taught] of [
      [undefined, []],
      [3, []],
      [10, [5]],
    ] as const) {
      const { view, lacks } = chain(head);
      assert.equal(judgeAnswer(view, context, errorReply('header not found')), 'missing');
      assert.deepEqual(lacks, taught, `head ${head}`);
    }
  });
});

describe('answers that are not what was asked', () => {
  const H = `0x${'ab'.repeat(32)}`;
  const OTHER = `0x${'cd'.repeat(32)}`;
  const byHash = (method: string) => ({ ...context, method, params: [H, false], needs: { kind: 'hash' } as const });

  it('a block, transaction or receipt by hash naming another hash is bad; the same hash (any case) is ok', () => {
    const { view } = chain(10);
    for (const [method, key] of [
      ['eth_getBlockByHash', 'hash'],
      ['eth_getTransactionByHash', 'hash'],
      ['eth_getTransactionReceipt', 'transactionHash'],
    ] as const) {
      // The block's own hash, not one nested in its transactions, is what counts.
      const nested = { transactions: [{ [key]: H }], [key]: OTHER, blockNumber: '0x5' };
      assert.equal(judgeAnswer(view, byHash(method), resultReply(nested)), 'bad', method);
      assert.equal(judgeAnswer(view, byHash(method), resultReply({ number: '0x5' })), 'bad', `${method}: no hash`);
      const right = { [key]: H.toUpperCase().replace('0X', '0x'), blockNumber: '0x5' };
      assert.equal(judgeAnswer(view, byHash(method), resultReply(right)), 'ok', method);
    }
  });

  it('a head above the head ceiling is bad and never reported; at the ceiling it is reported', () => {
    const { view, reported } = chain(10, 18);
    const blockNumber = { ...context, method: 'eth_blockNumber', params: [], needs: { kind: 'head' } as const };
    assert.equal(judgeAnswer(view, blockNumber, resultReply('0xf4240')), 'bad');
    assert.equal(judgeAnswer(view, blockNumber, resultReply('0x12')), 'ok');
    assert.deepEqual(reported, [18]);
  });

  it('a head above the network head from an origin whose claim was refused is bad and never reported', () => {
    const { view, reported } = chain(10, 18, true);
    const blockNumber = { ...context, method: 'eth_blockNumber', params: [], needs: { kind: 'head' } as const };
    assert.equal(judgeAnswer(view, blockNumber, resultReply('0xc')), 'bad', 'within the ceiling, yet its word alone');
    assert.equal(judgeAnswer(view, blockNumber, resultReply('0xa')), 'ok', 'the adopted head itself');
    assert.deepEqual(reported, [10]);
    const honest = chain(10, 18);
    assert.equal(judgeAnswer(honest.view, blockNumber, resultReply('0xc')), 'ok', 'from an origin not refused');
    assert.deepEqual(honest.reported, [12]);
  });

  it('a null from an origin whose head claim was refused is retried elsewhere', () => {
    const { view } = chain(10, undefined, true);
    assert.equal(judgeAnswer(view, byHash('eth_getBlockByHash'), resultReply(null)), 'behind');
    assert.equal(judgeAnswer(chain(10).view, byHash('eth_getBlockByHash'), resultReply(null)), 'ok');
  });
});
