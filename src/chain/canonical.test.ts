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

/** A node restarted with a new chain: another block 0, then `count` blocks. */
function restarted(count: number): FakeNode {
  const node = new FakeNode();
  node.blocks = [{ ...(node.at(0) as BlockHead), hash: `0x${'ab'.repeat(32)}` }];
  return node.mine(count, 'restarted');
}

test('a restarted chain (another block 0) below the window starts the chain again, from block 0', async () => {
  const a = new FakeNode().mine(40);
  const c = chainOf(8);
  await c.chain.follow(a.at(30) as BlockHead, from(a), true);
  await c.chain.follow(a.head, from(a), true);
  const b = restarted(3);
  assert.equal(await c.chain.follow(b.head, from(b), true), 'reorged');
  assert.deepEqual(
    {
      forkPoint: c.reorgs[0]?.forkPoint,
      beyondWindow: c.reorgs[0]?.beyondWindow,
      removed: c.reorgs[0]?.removed.map((block) => block.number),
    },
    { forkPoint: 0, beyondWindow: true, removed: [33, 34, 35, 36, 37, 38, 39, 40] },
  );
  assert.deepEqual(c.heads.slice(-4), [0, 1, 2, 3]);
  assert.equal(c.chain.tip?.hash, b.head.hash);
  // It then goes on as any chain, and its own old heads are old news.
  b.mine(2, 'restarted');
  assert.equal(await c.chain.follow(b.head, from(b), true), 'extended');
  assert.deepEqual(c.heads.slice(-2), [4, 5]);
  // A restart found when the new chain is already longer than the window: its last window of blocks.
  const d = chainOf(8);
  await d.chain.follow(a.at(35) as BlockHead, from(a), true);
  await d.chain.follow(a.head, from(a), true);
  const longer = restarted(20);
  assert.equal(await d.chain.follow(longer.head, from(longer), true), 'reorged');
  assert.equal(d.reorgs[0]?.forkPoint, 0);
  assert.deepEqual(
    d.chain.blocks().map((block) => block.number),
    [13, 14, 15, 16, 17, 18, 19, 20],
  );
  assert.deepEqual(d.heads.slice(-8), [13, 14, 15, 16, 17, 18, 19, 20]);
});

test('below the window, a head of our own chain, one from an origin that may not replace, or with block 0 unknown changes nothing', async () => {
  const a = new FakeNode().mine(40);
  const c = chainOf(8);
  await c.chain.follow(a.at(30) as BlockHead, from(a), true);
  await c.chain.follow(a.head, from(a), true);
  const behind = new FakeNode().sync(a).rewind(20);
  let asked = 0;
  const counted = async (n: number) => {
    asked += 1;
    return behind.at(n);
  };
  assert.equal(await c.chain.follow(behind.head, counted, true), 'unchanged');
  assert.equal(await c.chain.follow(behind.head, counted, true), 'unchanged');
  assert.equal(asked, 1, 'block 0 asked once for the same head');
  assert.equal(await c.chain.follow(restarted(3).head, from(restarted(3)), false), 'unchanged');
  assert.deepEqual([c.heads.length, c.reorgs.length], [9, 0]);

  // A chain started by an origin that would not give block 0: a restart cannot be told from lag.
  const blind = chainOf(8);
  await blind.chain.follow(a.at(35) as BlockHead, async (n) => (n === 0 ? undefined : a.at(n)), true);
  await blind.chain.follow(a.head, from(a), true);
  assert.equal(await blind.chain.follow(restarted(3).head, from(restarted(3)), true), 'unchanged');
  assert.deepEqual(blind.reorgs, []);
});
