import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeHealth, FakeNode, fakePool, fakeSource } from '../../test/helpers/fake-chain.js';
import { ManualClock } from '../clock.js';
import type { Pool } from '../model/pool.js';
import { StaticPoolDirectory } from '../routing/static-directory.js';
import { HEAD_CACHE_MS, LEADER_MARGIN } from './network-chain.js';
import { EARLIEST_TTL_MS } from './origin-chain.js';
import { ChainTracker, SYNCING_CHECK_MS } from './tracker.js';
import type { BlockHead, ChainReorg, HeadPushListener } from './types.js';

/**
 * The tracker against scripted chains (test/helpers/fake-chain.ts) and an injected clock: every step is
 * `refresh()` (one poll round, awaited), so what the tracker knows after it is exact.
 */

type Event = { head: number; hash: string } | { reorg: ChainReorg } | { gap: [number, number] };

function setup(nodes: Record<string, FakeNode>, pools: Pool[], networkPools = pools.map((p) => p.name)) {
  const clock = new ManualClock(1_000_000);
  const health = new FakeHealth();
  const directory = new StaticPoolDirectory(pools);
  const source = fakeSource(nodes);
  const tracker = new ChainTracker({
    networks: { net: { pools: networkPools, head_poll_interval: 1_000 } },
    directory,
    health,
    source,
    clock,
  });
  const events: Event[] = [];
  const finalized: BlockHead[] = [];
  tracker.addListener({
    head: (_n, block) => events.push({ head: block.number, hash: block.hash }),
    reorg: (_n, reorg) => events.push({ reorg }),
    gap: (_n, from, to) => events.push({ gap: [from, to] }),
    finalized: (_n, block) => finalized.push(block),
  });
  const heads = () => events.flatMap((e) => ('head' in e ? [e.head] : []));
  return { clock, health, directory, source, tracker, events, heads, finalized };
}

const hashes = (node: FakeNode, from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => node.at(from + i)?.hash);

describe('canonical heads', () => {
  test('arrive in order, each once; missing numbers are back-filled from the origin', async () => {
    const a = new FakeNode().mine(10);
    const t = setup({ a }, [fakePool('p', ['a'])]);
    await t.tracker.refresh();
    assert.deepEqual(t.heads(), [10], 'the first head is whatever block was seen first');
    await t.tracker.refresh();
    assert.deepEqual(t.heads(), [10], 'the same head again is no new head');
    a.mine(1);
    await t.tracker.refresh();
    a.mine(5);
    await t.tracker.refresh();
    assert.deepEqual(t.heads(), [10, 11, 12, 13, 14, 15, 16]);
    assert.deepEqual(
      t.events.map((e) => ('head' in e ? e.hash : undefined)),
      hashes(a, 10, 16),
    );
    assert.deepEqual(
      t.tracker.canonical('net').map((b) => b.number),
      [10, 11, 12, 13, 14, 15, 16],
    );
  });

  test('a reorg names its fork point and removed blocks before the new branch, from the fork point on', async () => {
    const a = new FakeNode().mine(15);
    const t = setup({ a }, [fakePool('p', ['a'])]);
    await t.tracker.refresh();
    a.mine(5);
    await t.tracker.refresh(); // canonical 15..20
    const old = hashes(a, 18, 20);
    a.rewind(17).mine(4, 'b'); // 18'..21'
    await t.tracker.refresh();
    const [reorg, ...rest] = t.events.slice(6);
    assert.ok(reorg !== undefined && 'reorg' in reorg);
    assert.equal(reorg.reorg.forkPoint, 18);
    assert.equal(reorg.reorg.beyondWindow, false);
    assert.deepEqual(
      reorg.reorg.removed.map((b) => b.hash),
      old,
    );
    assert.deepEqual(
      rest.map((e) => ('head' in e ? e.head : -1)),
      [18, 19, 20, 21],
    );
    assert.deepEqual(
      rest.map((e) => ('head' in e ? e.hash : '')),
      hashes(a, 18, 21),
    );
  });

  test('a reorg at the same height, and one to a lower head (a reverted node), are reorgs too', async () => {
    const a = new FakeNode().mine(10);
    const t = setup({ a }, [fakePool('p', ['a'])]);
    await t.tracker.refresh();
    a.mine(5);
    await t.tracker.refresh(); // canonical 10..15
    const removed = hashes(a, 15, 15);
    a.rewind(14).mine(1, 'c'); // 15' at the same height
    await t.tracker.refresh();
    const same = t.events.slice(6);
    assert.deepEqual(same.length, 2);
    assert.ok('reorg' in same[0]!);
    assert.equal(same[0].reorg.forkPoint, 15);
    assert.deepEqual(
      same[0].reorg.removed.map((b) => b.hash),
      removed,
    );
    assert.deepEqual(same[1], { head: 15, hash: a.at(15)?.hash });

    const before = hashes(a, 12, 15);
    a.rewind(11).mine(1, 'd'); // head 12' below the tip 15'
    await t.tracker.refresh();
    const lower = t.events.slice(8);
    assert.ok('reorg' in lower[0]!);
    assert.equal(lower[0].reorg.forkPoint, 12);
    assert.deepEqual(
      lower[0].reorg.removed.map((b) => b.hash),
      before,
    );
    assert.deepEqual(lower.slice(1), [{ head: 12, hash: a.at(12)?.hash }]);
    assert.equal(t.tracker.canonicalHead('net')?.number, 12);
  });

  test('another origin extends the chain with blocks that link; one alone on another chain never moves it', async () => {
    const a = new FakeNode().mine(40);
    const b = new FakeNode().sync(a);
    const x = new FakeNode().sync(a);
    const t = setup({ a, b, x }, [fakePool('p', ['a', 'b', 'x'])]);
    await t.tracker.refresh();
    a.mine(10);
    t.clock.advance(12_000); // one block interval: the head ceiling allows 10 blocks more
    b.sync(a);
    x.sync(a).rewind(45).mine(5, 'x'); // another chain from 46, at the same height
    await t.tracker.refresh();
    assert.deepEqual(t.heads(), [40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50]);
    assert.equal(t.tracker.canonicalHead('net')?.hash, a.head.hash, 'the leader is the first at the top');
    assert.equal(t.tracker.leader('net')?.origin.name, 'a');

    x.mine(LEADER_MARGIN, 'x'); // ahead of the others: refused, no other origin reports its blocks
    await t.tracker.refresh();
    assert.ok(!t.events.some((e) => 'reorg' in e));
    assert.equal(t.tracker.networkHead('net'), 50, 'a refused claim is not the network head');
    const xState = () => t.tracker.trackedOrigins('net').find((o) => o.origin.name === 'x')?.state;
    assert.deepEqual([xState()?.refused, xState()?.head], [true, 40], 'x keeps the last head of it that was adopted');
    assert.ok(t.source.asked.includes('x:51'), 'x was read once to see whether it links');
    t.source.asked.length = 0;
    await t.tracker.refresh();
    assert.deepEqual(
      t.source.asked.filter((q) => /^x:\d+$/.test(q)),
      [],
      'a refused header is not read again',
    );

    b.mine(1); // the same chain, one ahead: any origin may extend
    await t.tracker.refresh();
    assert.deepEqual(t.heads().slice(-2), [50, 51]);

    x.mine(8, 'x'); // far ahead now: still its word alone
    t.clock.advance(12_000);
    await t.tracker.refresh();
    assert.equal(t.events.filter((e) => 'reorg' in e).length, 0);
    assert.equal(t.tracker.canonicalHead('net')?.hash, b.head.hash);

    a.sync(x); // the others follow x's chain: the leader shows it, another origin backs it — one switch
    b.sync(x);
    await t.tracker.refresh();
    const reorgs = t.events.filter((e) => 'reorg' in e);
    assert.equal(reorgs.length, 1);
    assert.equal((reorgs[0] as { reorg: ChainReorg }).reorg.forkPoint, 46);
    assert.equal(t.tracker.canonicalHead('net')?.hash, x.head.hash);
    assert.equal(xState()?.refused, false, 'adopted again: no longer refused');
  });

  test('a leader whose head polls fail twice in a row steps down: another branch takes over at once', async () => {
    const a = new FakeNode().mine(20);
    const b = new FakeNode().sync(a);
    const t = setup({ a, b }, [fakePool('p', ['a', 'b'])]);
    await t.tracker.refresh();
    assert.equal(t.tracker.leader('net')?.origin.name, 'a');
    a.mine(2); // 21 and 22 on a only, then a dies
    await t.tracker.refresh();
    assert.deepEqual(t.heads(), [20, 21, 22]);
    a.failing = true;
    b.mine(1, 'b'); // b's own 21: does not link to 22, within the margin of a's last head
    await t.tracker.refresh();
    assert.deepEqual(t.heads(), [20, 21, 22], 'one failed poll: a still leads');
    await t.tracker.refresh();
    assert.equal(t.tracker.leader('net')?.origin.name, 'b', 'two in a row: a steps down');
    const reorgs = t.events.filter((e): e is { reorg: ChainReorg } => 'reorg' in e);
    assert.deepEqual(
      reorgs.map((e) => [e.reorg.forkPoint, e.reorg.removed.map((block) => block.number)]),
      [[21, [21, 22]]],
    );
    assert.deepEqual(t.heads(), [20, 21, 22, 21]);
    assert.equal(t.tracker.canonicalHead('net')?.hash, b.head.hash);
    assert.equal(t.tracker.networkHead('net'), 22, "a failed poll keeps a's last head for routing");

    a.failing = false; // a is back, still on its branch and higher: within the margin, b keeps leading
    await t.tracker.refresh();
    assert.equal(t.tracker.leader('net')?.origin.name, 'b');
    assert.equal(t.events.filter((e) => 'reorg' in e).length, 1, 'no flap back');
  });

  test('a head wider than the back-fill bound is a gap event, then heads go on in order', async () => {
    const a = new FakeNode().mine(5);
    const t = setup({ a }, [fakePool('p', ['a'])]);
    await t.tracker.refresh();
    a.mine(300);
    await t.tracker.refresh();
    assert.deepEqual(t.events[1], { gap: [6, 305 - 128] });
    assert.deepEqual(
      t.heads().slice(1),
      Array.from({ length: 128 }, (_, i) => 305 - 127 + i),
    );
    assert.equal(t.tracker.canonical('net').length, 128);
  });
});

describe('the network head', () => {
  test('is the highest head among healthy origins of enabled pools', async () => {
    const a = new FakeNode().mine(30);
    const b = new FakeNode().sync(a).rewind(25);
    const pa = fakePool('pa', ['a']);
    const pb = fakePool('pb', ['b']);
    const t = setup({ a, b }, [pa, pb]);
    assert.equal(t.tracker.networkHead('net'), undefined, 'nothing known before the first poll');
    await t.tracker.refresh();
    assert.equal(t.tracker.networkHead('net'), 30);
    assert.deepEqual(
      { head: t.tracker.origin(pa.id, 'a')?.head, hash: t.tracker.origin(pa.id, 'a')?.hash },
      { head: 30, hash: a.head.hash },
    );

    t.health.originsDown.add(`${pa.id}/a`);
    t.clock.advance(HEAD_CACHE_MS); // health has no events: the cached head lapses
    assert.equal(t.tracker.networkHead('net'), 25);
    t.health.originsDown.clear();
    t.health.poolsDown.add(pa.id);
    t.clock.advance(HEAD_CACHE_MS);
    assert.equal(t.tracker.networkHead('net'), 25);
    t.health.poolsDown.clear();
    t.clock.advance(HEAD_CACHE_MS);
    assert.equal(t.tracker.networkHead('net'), 30);

    // A disabled origin leaves the tracker with the directory change.
    t.directory.replace([{ ...pa, origins: pa.origins.map((o) => ({ ...o, enabled: false })) }, pb]);
    assert.equal(t.tracker.networkHead('net'), 25);
    assert.equal(t.tracker.origin(pa.id, 'a'), undefined);
    assert.equal(t.tracker.networkHead('other'), undefined);
  });

  test('a head change shows at once, without waiting for the cache to lapse', async () => {
    const a = new FakeNode().mine(7);
    const pool = fakePool('p', ['a']);
    const t = setup({ a }, [pool]);
    await t.tracker.refresh();
    assert.equal(t.tracker.networkHead('net'), 7);
    a.mine(2);
    await t.tracker.refresh();
    assert.equal(t.tracker.networkHead('net'), 9);
    t.tracker.sawHead(pool.id, 'a', 11);
    assert.equal(t.tracker.networkHead('net'), 11);
  });

  test('answers only raise a head (its hash is then unknown); a poll is the origin’s word and may lower it', async () => {
    const a = new FakeNode().mine(40);
    const pool = fakePool('p', ['a']);
    const t = setup({ a }, [pool]);
    await t.tracker.refresh();
    t.tracker.sawHead(pool.id, 'a', 39);
    assert.deepEqual(pick(t.tracker.origin(pool.id, 'a')), { head: 40, hash: a.head.hash });
    t.tracker.sawHead(pool.id, 'a', 42);
    assert.deepEqual(pick(t.tracker.origin(pool.id, 'a')), { head: 42, hash: undefined });
    a.rewind(35);
    await t.tracker.refresh();
    assert.deepEqual(pick(t.tracker.origin(pool.id, 'a')), { head: 35, hash: a.head.hash });
  });

  test('a failed poll keeps the last state', async () => {
    const a = new FakeNode().mine(12);
    const pool = fakePool('p', ['a']);
    const t = setup({ a }, [pool]);
    await t.tracker.refresh();
    a.failing = true;
    await t.tracker.refresh();
    assert.deepEqual(pick(t.tracker.origin(pool.id, 'a')), { head: 12, hash: a.head.hash });
    assert.equal(t.tracker.networkHead('net'), 12);
  });

  test('origins with weight 0 are not tracked (routing never picks them)', async () => {
    const a = new FakeNode().mine(3);
    const z = new FakeNode().mine(9);
    const pool = fakePool('p', ['a', { name: 'z', weight: 0 }]);
    const t = setup({ a, z }, [pool]);
    await t.tracker.refresh();
    assert.equal(t.tracker.networkHead('net'), 3);
    assert.ok(!t.source.asked.some((q) => q.startsWith('z:')));
  });
});

describe('what each origin can serve', () => {
  test('earliest: learned from a missing-data answer (not at or above a known head), forgotten after an hour; archive = 0', async () => {
    const a = new FakeNode().mine(1000);
    const b = new FakeNode().sync(a);
    const pool = fakePool('p', ['a', { name: 'b', archive: true }]);
    const t = setup({ a, b }, [pool]);
    t.tracker.lacksBlock(pool.id, 'a', 10);
    assert.equal(
      t.tracker.origin(pool.id, 'a')?.earliest,
      11,
      'learned before the first poll too (the forwarder reports only pruning)',
    );
    await t.tracker.refresh();
    t.tracker.lacksBlock(pool.id, 'a', 99);
    assert.equal(t.tracker.origin(pool.id, 'a')?.earliest, 100);
    t.tracker.lacksBlock(pool.id, 'a', 50);
    assert.equal(t.tracker.origin(pool.id, 'a')?.earliest, 100, 'a lower block teaches nothing new');
    t.tracker.lacksBlock(pool.id, 'a', 1000);
    assert.equal(t.tracker.origin(pool.id, 'a')?.earliest, 100, 'missing at or above its head: behind, not pruned');
    t.clock.advance(EARLIEST_TTL_MS - 1);
    assert.equal(t.tracker.origin(pool.id, 'a')?.earliest, 100);
    t.clock.advance(1);
    assert.equal(t.tracker.origin(pool.id, 'a')?.earliest, 0, 'forgotten an hour after it was learned');

    t.tracker.lacksBlock(pool.id, 'b', 500);
    assert.equal(t.tracker.origin(pool.id, 'b')?.earliest, 0, 'archive: true serves from genesis');
  });

  test('syncing: asked with the first poll, then every 30 s', async () => {
    const a = new FakeNode().mine(2);
    a.syncing = true;
    const pool = fakePool('p', ['a']);
    const t = setup({ a }, [pool]);
    await t.tracker.refresh();
    assert.equal(t.tracker.origin(pool.id, 'a')?.syncing, true);
    a.syncing = false;
    await t.tracker.refresh();
    assert.equal(t.tracker.origin(pool.id, 'a')?.syncing, true, 'not asked again yet');
    t.clock.advance(SYNCING_CHECK_MS);
    await t.tracker.refresh();
    assert.equal(t.tracker.origin(pool.id, 'a')?.syncing, false);
    assert.equal(t.source.asked.filter((q) => q === 'a:syncing').length, 2);
  });

  test('the monotonic reported head keeps the maximum, per network', () => {
    const t = setup({}, [fakePool('p', ['a'])]);
    assert.equal(t.tracker.reportedHead('net'), undefined);
    t.tracker.reported('net', 10);
    t.tracker.reported('net', 5);
    assert.equal(t.tracker.reportedHead('net'), 10);
    t.tracker.reported('net', 12);
    assert.equal(t.tracker.reportedHead('net'), 12);
    t.tracker.reported('elsewhere', 99);
    assert.equal(t.tracker.reportedHead('elsewhere'), undefined, 'unknown networks are not tracked');
  });
});

describe('directory changes', () => {
  test('new origins are tracked, removed ones forgotten, a changed address starts over', async () => {
    const a = new FakeNode().mine(4);
    const b = new FakeNode().mine(6);
    const pool = fakePool('p', ['a']);
    const t = setup({ a, b }, [pool]);
    await t.tracker.refresh();
    t.tracker.lacksBlock(pool.id, 'a', 1);
    t.directory.replace([{ ...pool, origins: [...pool.origins, ...fakePool('p', ['b']).origins] }]);
    assert.equal(t.tracker.origin(pool.id, 'a')?.earliest, 2, 'state kept across the change');
    await t.tracker.refresh();
    assert.equal(t.tracker.origin(pool.id, 'b')?.head, 6);

    const moved = { ...pool.origins[0]!, address: 'http://elsewhere.invalid:8545' };
    t.directory.replace([{ ...pool, origins: [moved] }]);
    assert.deepEqual(pick(t.tracker.origin(pool.id, 'a')), { head: undefined, hash: undefined });
    assert.equal(t.tracker.origin(pool.id, 'b'), undefined);
  });
});

describe('finality', () => {
  test('fetched from the best origin while the network is in use, every 12 s, idle after 5 minutes', async () => {
    const a = new FakeNode().mine(100);
    const t = setup({ a }, [fakePool('p', ['a'])]);
    await t.tracker.refresh();
    assert.equal(t.finalized.length, 0, 'not in use: not fetched');
    t.tracker.touch('net'); // fetched at once while none is known
    await waitFor(() => t.finalized.length === 1, 'the first finalized block');
    await t.tracker.refresh();
    assert.deepEqual(
      t.finalized.map((b) => b.number),
      [98],
    );
    a.mine(3);
    t.clock.advance(11_999);
    await t.tracker.refresh();
    assert.equal(t.finalized.length, 1);
    t.clock.advance(1);
    await t.tracker.refresh();
    assert.deepEqual(
      t.finalized.map((b) => b.number),
      [98, 101],
    );
    assert.equal(t.tracker.finalized('net')?.number, 101);
    t.clock.advance(300_000); // no touch for 5 minutes and more
    await t.tracker.refresh();
    assert.equal(t.finalized.length, 2);
  });

  test('block(network, n) asks an origin known to have it', async () => {
    const a = new FakeNode().mine(10);
    const b = new FakeNode().sync(a).mine(5);
    const t = setup({ a, b }, [fakePool('p', ['a', 'b'])]);
    await t.tracker.refresh();
    t.source.asked.length = 0;
    const block = await t.tracker.block('net', 14);
    assert.equal(block?.hash, b.at(14)?.hash);
    assert.deepEqual(t.source.asked, ['b:14']);
    assert.equal(await t.tracker.block('nowhere', 1), undefined);
  });
});

describe('polling on its own', () => {
  test('start() polls on the network interval and stop() ends it', async () => {
    const a = new FakeNode().mine(1);
    const tracker = new ChainTracker({
      networks: { net: { pools: ['p'], head_poll_interval: 10 } },
      directory: new StaticPoolDirectory([fakePool('p', ['a'])]),
      health: new FakeHealth(),
      source: fakeSource({ a }),
      clock: new ManualClock(0),
    });
    tracker.start();
    try {
      await waitFor(() => tracker.networkHead('net') === 1, 'the first poll');
      a.mine(3);
      await waitFor(() => tracker.networkHead('net') === 4, 'a later poll');
    } finally {
      tracker.stop();
    }
  });
});

describe('pushes', () => {
  test('a live push brings the head and shows as pushing; a lost one hands back to polling', async () => {
    const a = new FakeNode().mine(3);
    const pool = fakePool('p', ['a']);
    (pool.origins[0] as { ws_address?: string }).ws_address = 'ws://a.invalid:8546';
    const listeners: HeadPushListener[] = [];
    const source = fakeSource({ a });
    const tracker = new ChainTracker({
      networks: { net: { pools: ['p'], head_poll_interval: 60_000 } },
      directory: new StaticPoolDirectory([pool]),
      health: new FakeHealth(),
      source,
      pushes: {
        subscribe: (_pool, _origin, listener) => {
          listeners.push(listener);
          return () => {};
        },
      },
      clock: new ManualClock(0),
    });
    tracker.start();
    try {
      assert.equal(listeners.length, 1, 'one push subscription for the origin with a ws_address');
      await waitFor(() => tracker.networkHead('net') === 3, 'the first poll');
      assert.equal(tracker.trackedOrigins('net')[0]?.pushing, false);
      listeners[0]?.live(true);
      assert.equal(tracker.trackedOrigins('net')[0]?.pushing, true);
      a.mine(1);
      listeners[0]?.head(a.head);
      await waitFor(() => tracker.canonicalHead('net')?.number === 4, 'the pushed head');
      assert.equal(tracker.leader('net')?.origin.name, 'a');
      assert.equal(tracker.leader('net')?.pushing, true);
      listeners[0]?.live(false);
      assert.equal(tracker.trackedOrigins('net')[0]?.pushing, false);
    } finally {
      tracker.stop();
    }
  });
});

function pick(state: { head: number | undefined; hash: string | undefined } | undefined) {
  return { head: state?.head, hash: state?.hash };
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('reconfigure (a config reload)', () => {
  test('a network added is followed, one removed is not, one whose pools changed keeps its chain', async () => {
    const a = new FakeNode().mine(10);
    const b = new FakeNode().mine(20);
    const t = setup({ a, b }, [fakePool('p', ['a']), fakePool('q', ['b'])], ['p']);
    await t.tracker.refresh();
    assert.deepEqual(t.tracker.networks(), ['net']);
    assert.equal(t.tracker.networkHead('net'), 10);
    t.tracker.reconfigure({
      net: { pools: ['p'], head_poll_interval: 1_000 },
      other: { pools: ['q'], head_poll_interval: 1_000 },
    });
    await t.tracker.refresh();
    assert.deepEqual(t.tracker.networks(), ['net', 'other']);
    assert.equal(t.tracker.networkHead('other'), 20, 'the network added is followed');
    assert.deepEqual(t.heads(), [10, 20]);
    const canonical = t.tracker.canonical('net');
    t.tracker.reconfigure({ net: { pools: ['p', 'q'], head_poll_interval: 1_000 } });
    assert.deepEqual(t.tracker.networks(), ['net'], 'the network removed is no longer followed');
    assert.equal(t.tracker.networkHead('other'), undefined);
    assert.deepEqual(t.tracker.canonical('net'), canonical, 'pools changed: the chain is kept');
    assert.deepEqual(
      t.tracker.trackedOrigins('net').map((o) => o.origin.name),
      ['a', 'b'],
      'and follows the new pools',
    );
  });

  test('a network whose poll interval changed is followed anew', async () => {
    const a = new FakeNode().mine(10);
    const t = setup({ a }, [fakePool('p', ['a'])]);
    await t.tracker.refresh();
    assert.equal(t.tracker.canonical('net').length, 1);
    t.tracker.reconfigure({ net: { pools: ['p'], head_poll_interval: 500 } });
    assert.deepEqual(t.tracker.canonical('net'), [], 'a new chain, as at a start');
    await t.tracker.refresh();
    assert.equal(t.tracker.networkHead('net'), 10);
  });
});
