/**
 * What a missing-data answer teaches the tracker: pruned state always teaches the origin's earliest block;
 * an unknown block teaches it only below the origin's known head (above it, or with no head known, the
 * origin may just be behind). Either way the call goes on to the next origin.
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

function chain(head: number | undefined) {
  const lacks: number[] = [];
  const view: ChainView & ChainFeedback = {
    networkHead: () => head,
    origin: () => ({ head, hash: undefined, earliest: 0, syncing: false }),
    reportedHead: () => undefined,
    sawHead: () => undefined,
    lacksBlock: (_pool, _origin, n) => lacks.push(n),
    reported: () => undefined,
  };
  return { view, lacks };
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
