import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyBlockLag } from './jsonrpc.js';
import { type ProbeResult, passed } from './result.js';

/** The pool-wide lag rule: against the pool's best, never above the network head the tracker adopted. */

const at = (block: bigint): ProbeResult => ({ ...passed(200, 1), block_number: block });

test('an origin more than max_block_lag behind the best fails; at the limit it passes', () => {
  const results = new Map([
    ['a', at(111n)],
    ['b', at(112n)],
    ['c', at(120n)],
  ]);
  applyBlockLag(results, 8);
  assert.deepEqual(
    [...results.values()].map((r) => r.ok),
    [false, true, true],
  );
  assert.equal(results.get('a')?.failure_reason, "block 0x6f is 9 behind the pool's best 0x78 (max_block_lag 8)");
});

test('one origin claiming a far head makes nobody lag: the best is at most the adopted head', () => {
  const results = new Map([
    ['honest', at(300n)],
    ['liar', at(1_000_000n)],
  ]);
  applyBlockLag(results, 8, [], 301n);
  assert.deepEqual(
    [...results.values()].map((r) => r.ok),
    [true, true],
  );
  const behind = new Map([
    ['slow', at(290n)],
    ['liar', at(1_000_000n)],
  ]);
  applyBlockLag(behind, 8, [], 301n);
  assert.equal(behind.get('slow')?.failure_reason, "block 0x122 is 11 behind the pool's best 0x12d (max_block_lag 8)");
});
