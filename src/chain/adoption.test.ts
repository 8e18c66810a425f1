import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeHealth, FakeNode, fakePool, fakeSource, makeBlock } from '../../test/helpers/fake-chain.js';
import { ManualClock } from '../clock.js';
import { MetricsRegistry } from '../metrics/registry.js';
import type { Pool } from '../model/pool.js';
import { StaticPoolDirectory } from '../routing/static-directory.js';
import { ChainTracker } from './tracker.js';
import type { ChainReorg } from './types.js';

/**
 * The adoption rule (adoption.ts, SPEC §20: no single origin moves the chain) against scripted chains: a
 * lying origin claiming a far head, a forked head and a head that does not link, what backs a claim
 * (another pool, pool-mates in a one-pool network, a trusted origin), the lone and the alone origin, the
 * head ceiling, and answers' numbers. Every step is an awaited `refresh()` on an injected clock.
 */

function setup(nodes: Record<string, FakeNode>, pools: Pool[], anchor: string[] = []) {
  const clock = new ManualClock(1_000_000);
  const health = new FakeHealth();
  const metrics = new MetricsRegistry();
  const source = fakeSource(nodes);
  const tracker = new ChainTracker({
    networks: {
      net: { pools: pools.map((p) => p.name), head_poll_interval: 1_000, verify_anchor: { origins: anchor } },
    },
    directory: new StaticPoolDirectory(pools),
    health,
    source,
    clock,
    metrics,
  });
  const heads: number[] = [];
  const reorgs: ChainReorg[] = [];
  tracker.addListener({ head: (_n, block) => heads.push(block.number), reorg: (_n, reorg) => reorgs.push(reorg) });
  const state = (name: string) => tracker.trackedOrigins('net').find((o) => o.origin.name === name)?.state;
  const refusedCount = (origin: string) => {
    const line = metrics
      .render()
      .split('\n')
      .find((l) => l.startsWith(`switchyard_chain_head_refused_total{network="net",origin="${origin}"}`));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  };
  return { clock, health, source, tracker, heads, reorgs, state, refusedCount };
}

/** A node that lies about its head: `latest` is `lie`, every block by number is the honest node's. */
function liar(honest: FakeNode, lie: () => ReturnType<typeof makeBlock>): FakeNode {
  const node = new FakeNode();
  Object.defineProperty(node, 'blocks', { get: () => honest.blocks, set: () => {} });
  Object.defineProperty(node, 'head', { get: lie });
  return node;
}

describe('a lying origin in another pool', () => {
  const lies = {
    'a far head (block 1,000,000 on a made-up parent)': (_h: FakeNode) =>
      makeBlock(1_000_000, `0x${'ab'.repeat(32)}`, 'lie'),
    'a forked head (the head height, another hash, a real parent)': (h: FakeNode) =>
      makeBlock(h.head.number, h.at(h.head.number - 1)?.hash as string, 'fork'),
    'a head that does not link (one above, a made-up parent)': (h: FakeNode) =>
      makeBlock(h.head.number + 1, `0x${'cd'.repeat(32)}`, 'nolink'),
  };
  for (const [what, lie] of Object.entries(lies)) {
    test(`claiming ${what} moves nothing; the liar counts as refused, lagging and counted`, async () => {
      const a = new FakeNode().mine(30);
      const l = liar(a, () => lie(a));
      const t = setup({ a, l }, [fakePool('honest', ['a']), fakePool('lying', ['l'])]);
      await t.tracker.refresh();
      a.mine(3);
      t.clock.advance(12_000);
      await t.tracker.refresh();
      assert.equal(t.tracker.networkHead('net'), 33);
      assert.equal(t.tracker.canonicalHead('net')?.hash, a.head.hash);
      assert.deepEqual(t.reorgs, []);
      assert.deepEqual(t.heads, [30, 31, 32, 33], 'the real chain, every block once');
      assert.equal(t.state('l')?.refused, true);
      assert.ok((t.state('l')?.head ?? 0) <= 33, 'its head is never the lie');
      assert.equal(t.state('a')?.refused, false);
      assert.ok(t.refusedCount('l') >= 1);
      assert.equal(t.refusedCount('a'), 0);
    });
  }

  test('a far claim stays refused however long the chain runs; answers above the ceiling are refused', async () => {
    const a = new FakeNode().mine(30);
    const l = liar(a, () => makeBlock(1_000_000, `0x${'ab'.repeat(32)}`, 'lie'));
    const t = setup({ a, l }, [fakePool('honest', ['a']), fakePool('lying', ['l'])]);
    await t.tracker.refresh();
    for (let i = 0; i < 5; i += 1) {
      a.mine(1);
      t.clock.advance(12_000);
      await t.tracker.refresh();
    }
    assert.equal(t.tracker.networkHead('net'), 35);
    const ceiling = t.tracker.headCeiling('net') as number;
    assert.equal(ceiling, 35 + 8, 'just after a head: 8 blocks of slack');
    const pool = t.tracker.trackedOrigins('net').find((o) => o.origin.name === 'a')?.pool as Pool;
    const before = t.refusedCount('a');
    t.tracker.sawHead(pool.id, 'a', 1_000_000);
    assert.equal(t.state('a')?.head, 35, 'a number above the ceiling is not taken');
    assert.equal(t.refusedCount('a'), before + 1, 'and counted');
    t.tracker.reported('net', 1_000_000);
    assert.equal(t.tracker.reportedHead('net'), undefined, 'the monotonic head never takes it either');
    t.tracker.sawHead(pool.id, 'a', ceiling);
    assert.equal(t.state('a')?.head, ceiling, 'up to the ceiling an answer raises the origin’s head');
    assert.equal(t.tracker.networkHead('net'), 35, 'but never the network head');
    t.clock.advance(12_000);
    assert.equal(t.tracker.headCeiling('net'), 35 + 8 + 10, 'one block interval later: 10 blocks more');
  });
});

describe('what vouches for a claim', () => {
  test('a real reorg is adopted when an origin in another pool reports the new branch', async () => {
    const a = new FakeNode().mine(20);
    const b = new FakeNode().sync(a);
    const t = setup({ a, b }, [fakePool('pa', ['a']), fakePool('pb', ['b'])]);
    await t.tracker.refresh();
    a.mine(3);
    b.sync(a);
    await t.tracker.refresh(); // 20..23
    a.rewind(21).mine(2, 'new'); // 22', 23'
    await t.tracker.refresh();
    assert.equal(t.reorgs.length, 0, 'the leader alone on the new branch: refused for now');
    assert.equal(t.state('a')?.refused, true);
    b.sync(a);
    await t.tracker.refresh();
    assert.equal(t.reorgs.length, 1);
    assert.equal(t.reorgs[0]?.forkPoint, 22);
    assert.equal(t.tracker.canonicalHead('net')?.hash, a.head.hash);
    assert.equal(t.state('a')?.refused, false);
  });

  test('pool-mates do not back each other while another pool has an origin; in a one-pool network they do', async () => {
    const a = new FakeNode().mine(20);
    const a2 = new FakeNode().sync(a);
    const c = new FakeNode().sync(a);
    const split = setup({ a, a2, c }, [fakePool('pa', ['a', 'a2']), fakePool('pc', ['c'])]);
    await split.tracker.refresh();
    a.rewind(18).mine(2, 'new');
    a2.sync(a);
    await split.tracker.refresh();
    assert.deepEqual(split.reorgs, [], 'only pool pa says so: c (pool pc) does not');

    const d = new FakeNode().mine(20);
    const d2 = new FakeNode().sync(d);
    const one = setup({ d, d2 }, [fakePool('p', ['d', 'd2'])]);
    await one.tracker.refresh();
    d.rewind(18).mine(2, 'new');
    d2.sync(d);
    await one.tracker.refresh();
    assert.equal(one.reorgs.length, 1, 'one pool: its origins are all there is to ask');
  });

  test('an origin the operator trusts (verify_anchor.origins) moves the chain on its own word', async () => {
    const a = new FakeNode().mine(20);
    const b = new FakeNode().sync(a);
    const t = setup({ a, b }, [fakePool('pa', ['a']), fakePool('pb', ['b'])], ['pb/b']);
    await t.tracker.refresh();
    assert.equal(t.tracker.leader('net')?.origin.name, 'a');
    b.rewind(18).mine(2, 'new');
    await t.tracker.refresh();
    assert.equal(t.reorgs.length, 1, 'b is not the leader, but trusted');
    assert.equal(t.tracker.canonicalHead('net')?.hash, b.head.hash);
    b.mine(40); // far beyond the ceiling: still its word
    await t.tracker.refresh();
    assert.equal(t.tracker.networkHead('net'), 60);
    assert.equal(t.refusedCount('b'), 0);
    assert.equal(t.state('a')?.refused, true, 'a, on the old branch, is the odd one now');
  });

  test('a bare trusted name must be unique in the network', async () => {
    const a = new FakeNode().mine(20);
    const b = new FakeNode().sync(a);
    const t = setup({ a, b }, [fakePool('pa', ['a', 'b']), fakePool('pb', ['b'])], ['b']);
    await t.tracker.refresh();
    b.rewind(18).mine(2, 'new');
    await t.tracker.refresh();
    assert.deepEqual(t.reorgs, [], '"b" names two origins: it trusts neither');
  });
});

describe('the lone, the alone and the first', () => {
  test('a lone origin is followed whatever it says, without a ceiling', async () => {
    const a = new FakeNode().mine(10);
    const t = setup({ a }, [fakePool('p', ['a'])]);
    await t.tracker.refresh();
    a.rewind(8).mine(100, 'new');
    await t.tracker.refresh();
    assert.equal(t.reorgs.length, 1);
    assert.equal(t.tracker.networkHead('net'), 108);
    assert.equal(t.tracker.headCeiling('net'), undefined);
  });

  test('an origin alone for now (the other failing) may replace blocks, within the ceiling', async () => {
    const a = new FakeNode().mine(20);
    const b = new FakeNode().sync(a);
    const t = setup({ a, b }, [fakePool('pa', ['a']), fakePool('pb', ['b'])]);
    await t.tracker.refresh();
    b.failing = true;
    a.rewind(18).mine(2, 'new');
    await t.tracker.refresh();
    await t.tracker.refresh();
    assert.equal(t.reorgs.length, 1, 'b failed twice: a is alone');
    a.mine(30);
    await t.tracker.refresh();
    assert.equal(t.tracker.networkHead('net'), 20, '30 blocks at once is beyond the ceiling');
    t.clock.advance(30_000); // 8 + 10 × 30 s ÷ 12 s = 33 blocks allowed now
    await t.tracker.refresh();
    assert.equal(t.tracker.networkHead('net'), 50);
  });

  test('an origin that shows no head (an error answer for latest) keeps nobody waiting for long', async () => {
    const a = new FakeNode().mine(20);
    const mute = new FakeNode();
    Object.defineProperty(mute, 'head', { get: () => undefined });
    const t = setup({ a, mute }, [fakePool('pa', ['a']), fakePool('pm', ['mute'])]);
    await t.tracker.refresh();
    assert.equal(t.tracker.networkHead('net'), undefined, 'a waits for the other to answer');
    await t.tracker.refresh();
    assert.equal(t.tracker.networkHead('net'), 20, 'two head reads without a head: a is alone');
  });

  test('at start the first origin to answer waits for another instead of starting the chain alone', async () => {
    const a = new FakeNode().mine(20);
    const l = liar(a, () => makeBlock(1_000_000, `0x${'ab'.repeat(32)}`, 'lie'));
    const t = setup({ l, a }, [fakePool('lying', ['l']), fakePool('honest', ['a'])]);
    await t.tracker.refresh();
    assert.equal(t.tracker.networkHead('net'), 20, 'the honest head, backed by the liar’s own block 20');
    assert.deepEqual(t.heads, [20]);
    assert.equal(t.refusedCount('a'), 0, 'waiting is not refusing');
  });
});
