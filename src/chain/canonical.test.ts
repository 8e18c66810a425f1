import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeNode } from '../../test/helpers/fake-chain.js';
import { CanonicalChain } from './canonical.js';
import type { BlockHead, ChainReorg } from './types.js';

/** The canonical window on its own, with a small window to reach its edges. */

function chainOf(window: number) {
  const heads: number[] = [];
  const reorgs: ChainReorg[] = [];
  const gaps: Array<[number, number]> = [];
  const chain = new CanonicalChain(
    {
      head: (block) => heads.push(block.number),
      reorg: (reorg) => reorgs.push(reorg),
      gap: (from, to) => gaps.push([from, to]),
    },
    window,
  );
  return { chain, heads, reorgs, gaps };
}

const from = (node: FakeNode) => async (n: number) => node.at(n);

test('a reorg deeper than the window is reported as such, from the window’s first block', async () => {
  const a = new FakeNode().mine(20);
  const c = chainOf(8);
  await c.chain.follow(a.at(10) as BlockHead, from(a), true);
  assert.equal(await c.chain.follow(a.head, from(a), true), 'extended');
  assert.deepEqual(
    c.chain.blocks().map((b) => b.number),
    [13, 14, 15, 16, 17, 18, 19, 20],
  );
  a.rewind(5).mine(16, 'deep'); // differs from block 6 on, below the window
  assert.equal(await c.chain.follow(a.head, from(a), true), 'reorged');
  assert.equal(c.reorgs.length, 1);
  const [reorg] = c.reorgs;
  assert.deepEqual(
    { forkPoint: reorg?.forkPoint, beyondWindow: reorg?.beyondWindow, removed: reorg?.removed.map((b) => b.number) },
    { forkPoint: 13, beyondWindow: true, removed: [13, 14, 15, 16, 17, 18, 19, 20] },
  );
  assert.deepEqual(c.heads.slice(-9), [13, 14, 15, 16, 17, 18, 19, 20, 21]);
  assert.equal(c.chain.tip?.hash, a.head.hash);
});

test('only a replacing origin may reorg; others are refused and nothing is emitted', async () => {
  const a = new FakeNode().mine(10);
  const b = new FakeNode().sync(a).rewind(8).mine(3, 'b');
  const c = chainOf(16);
  await c.chain.follow(a.head, from(a), true);
  assert.equal(await c.chain.follow(b.head, from(b), false), 'refused');
  assert.equal(await c.chain.follow(b.at(10) as BlockHead, from(b), false), 'refused');
  assert.deepEqual(c.heads, [10]);
  assert.deepEqual(c.reorgs, []);
});

test('an origin whose chain changes while it is read fails the step without emitting', async () => {
  const a = new FakeNode().mine(10);
  const c = chainOf(16);
  await c.chain.follow(a.head, from(a), true);
  a.mine(4);
  const target = a.head;
  // Between the head poll and the back-fill the origin reorganised blocks 11..13.
  const moved = new FakeNode().sync(a).rewind(10).mine(4, 'moved');
  assert.equal(await c.chain.follow(target, from(moved), true), 'failed');
  assert.deepEqual(c.heads, [10]);
  // Next round, with a consistent view, it goes through.
  assert.equal(await c.chain.follow(moved.head, from(moved), true), 'extended');
  assert.deepEqual(c.heads, [10, 11, 12, 13, 14]);
});

test('a whole other chain (different genesis) reorgs from block 0, not beyond the window', async () => {
  const a = new FakeNode().mine(3);
  const other = new FakeNode();
  other.blocks = [{ ...(other.at(0) as BlockHead), hash: `0x${'ee'.repeat(32)}` }];
  other.mine(4, 'o');
  const c = chainOf(16);
  await c.chain.follow(a.at(0) as BlockHead, from(a), true);
  await c.chain.follow(a.head, from(a), true);
  assert.equal(await c.chain.follow(other.head, from(other), true), 'reorged');
  assert.deepEqual(
    { forkPoint: c.reorgs[0]?.forkPoint, beyondWindow: c.reorgs[0]?.beyondWindow },
    { forkPoint: 0, beyondWindow: false },
  );
  assert.deepEqual(c.heads, [0, 1, 2, 3, 0, 1, 2, 3, 4]);
});
