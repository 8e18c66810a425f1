/**
 * The detector against a scripted chain (the tracker's listener calls and origin listing), a manual
 * clock and a real store: thresholds, hysteresis, divergence, reorg depth, and one incident when two
 * detectors (two processes) share the store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  block,
  forked,
  hash,
  incidentRows as rows,
  ScriptedChain,
  scriptedDetector,
  T0,
} from '../../test/helpers/incident-chain.js';
import { openTestStore } from '../../test/helpers/store.js';
import type { BlockHead } from '../chain/types.js';
import { ManualClock } from '../clock.js';
import type { Store } from '../store/database.js';

describe('IncidentDetector', () => {
  let store: Store;
  let close: () => Promise<void>;
  before(async () => {
    ({ store, close } = await openTestStore());
  });
  after(() => close());

  /** Two processes' detectors on the same store, each fed by its own chain; head_stall_after 2 s. */
  const twoDetectors = async () => {
    await store.db.deleteFrom('chain_incidents').execute();
    const clock = new ManualClock(T0);
    const chainA = new ScriptedChain();
    const chainB = new ScriptedChain();
    const a = make(chainA, clock, { head_stall_after: 2_000 });
    const b = make(chainB, clock, { head_stall_after: 2_000 });
    await a.start();
    await b.start();
    return { clock, chainA, chainB, a, b };
  };

  const make = (chain: ScriptedChain, clock: ManualClock, incidents: Record<string, unknown> = {}, finalityDepth = 2) =>
    scriptedDetector(store, chain, clock, incidents, finalityDepth);

  test('head stall: derived threshold (10 × median block interval, ≥ 10 s), none before 8 blocks, END after 2 blocks', async () => {
    await store.db.deleteFrom('chain_incidents').execute();
    const clock = new ManualClock(T0);
    const chain = new ScriptedChain();
    const detector = make(chain, clock);
    await detector.start();
    // 7 blocks 12 s apart, then silence far beyond 120 s: too few blocks to judge.
    for (let n = 1; n <= 7; n++) {
      clock.advance(12_000);
      chain.emitHead(block(n));
    }
    clock.advance(600_000);
    detector.check();
    await detector.settled();
    assert.equal((await rows(store)).length, 0, 'no stall alert before 8 blocks were seen');

    chain.emitHead(block(8)); // the 8th block: the pace is known now (median 12 s → 120 s)
    clock.advance(119_000);
    detector.check();
    await detector.settled();
    assert.equal((await rows(store)).length, 0, 'a block slower than usual but under 10 × the median pages nobody');
    clock.advance(1_000);
    detector.check();
    await detector.settled();
    let all = await rows(store);
    assert.equal(all.length, 1);
    assert.equal(all[0]?.kind, 'head_stall');
    assert.equal(all[0]?.status, 'open');
    assert.equal(JSON.parse(all[0]?.data ?? '{}').block_number, 8);

    chain.emitHead(block(9));
    await detector.settled();
    assert.equal((await rows(store))[0]?.status, 'open', 'one block does not end the stall');
    chain.emitHead(block(10));
    await detector.settled();
    all = await rows(store);
    assert.equal(all[0]?.status, 'closed', 'the second block ends it');
    assert.equal(JSON.parse(all[0]?.end_data ?? '{}').block_number, 10);
    await detector.stop();
  });

  test('a chain whose head moves only on demand (the idle devnet) raises no head or finality stall', async () => {
    for (const onDemand of [true, false]) {
      await store.db.deleteFrom('chain_incidents').execute();
      const clock = new ManualClock(T0);
      const chain = new ScriptedChain();
      const detector = scriptedDetector(store, chain, clock, {}, 2, onDemand ? ['net'] : []);
      await detector.start();
      // A burst of transactions mined one block each, then the devnet sits idle for ten minutes.
      for (let n = 1; n <= 10; n++) {
        clock.advance(1_000);
        chain.emitHead(block(n));
        chain.emitFinalized(block(n));
      }
      clock.advance(600_000);
      detector.check();
      await detector.settled();
      const kinds = (await rows(store)).map((row) => row.kind).sort();
      if (onDemand) assert.deepEqual(kinds, [], 'no stall on a chain that advances only on demand');
      else assert.deepEqual(kinds, ['finality_stall', 'head_stall'], 'the same silence elsewhere is a stall');
      await detector.stop();
    }
  });

  test('head stall with a configured threshold; a second detector on the same store records nothing twice', async () => {
    const { clock, chainA, chainB, a, b } = await twoDetectors();
    chainA.emitHead(block(1));
    chainB.emitHead(block(1));
    clock.advance(2_000);
    a.check();
    await a.settled();
    b.check();
    await b.settled();
    assert.equal((await rows(store)).length, 1, 'one incident, not one per process');
    // A third process starting now adopts the open incident and closes it when the head moves.
    const chainC = new ScriptedChain();
    const c = make(chainC, clock, { head_stall_after: 2_000 });
    await c.start();
    chainC.emitHead(block(1)); // what it sees first is a baseline, not an advance
    chainC.emitHead(block(2));
    await c.settled();
    assert.equal((await rows(store))[0]?.status, 'open', 'one advance after the baseline does not end it');
    chainC.emitHead(block(3));
    await c.settled();
    assert.equal((await rows(store))[0]?.status, 'closed');
    chainA.emitHead(block(2));
    chainA.emitHead(block(3));
    await a.settled();
    const all = await rows(store);
    assert.equal(all.length, 1);
    assert.equal(all[0]?.status, 'closed');
    await Promise.all([a.stop(), b.stop(), c.stop()]);
  });

  test('head stall: a detector started after the tracker took its head starts the clock from that head', async () => {
    await store.db.deleteFrom('chain_incidents').execute();
    const clock = new ManualClock(T0);
    const chain = new ScriptedChain();
    chain.emitHead(block(5)); // heard by nobody: the tracker polls before the detector starts
    const detector = make(chain, clock, { head_stall_after: 2_000 });
    await detector.start();
    clock.advance(1_999);
    detector.check();
    await detector.settled();
    assert.equal((await rows(store)).length, 0);
    clock.advance(1);
    detector.check();
    await detector.settled();
    const all = await rows(store);
    assert.deepEqual(
      all.map((row) => [row.kind, row.status, (JSON.parse(row.data) as { block_number: number }).block_number]),
      [['head_stall', 'open', 5]],
      'a chain that never moves after the start still stalls',
    );
    await detector.stop();
  });

  test('head stall adopted after a restart: the catch-up to the stalled block is no recovery', async () => {
    await store.db.deleteFrom('chain_incidents').execute();
    const clock = new ManualClock(T0);
    const chainA = new ScriptedChain();
    const a = make(chainA, clock, { head_stall_after: 2_000 });
    await a.start();
    chainA.emitHead(block(3));
    clock.advance(2_000);
    a.check();
    await a.settled();
    await a.stop();
    // The next run's canonical chain first shows a lagging origin's block 0, then back-fills up to 3.
    const chainB = new ScriptedChain();
    const b = make(chainB, clock, { head_stall_after: 2_000 });
    await b.start();
    for (let n = 0; n <= 4; n++) chainB.emitHead(block(n));
    clock.advance(10_000);
    b.check();
    await b.settled();
    let all = await rows(store);
    assert.deepEqual(
      all.map((row) => row.status),
      ['open'],
      'still the one open incident: 0…3 are no advance, 4 is one',
    );
    chainB.emitHead(block(5));
    await b.settled();
    all = await rows(store);
    assert.equal(all.length, 1);
    assert.equal(all[0]?.status, 'closed');
    assert.equal((JSON.parse(all[0]?.end_data ?? '{}') as { block_number: number }).block_number, 5);
    await b.stop();
  });

  test('head stall seen late by a second process, after the first recorded its END: still one incident', async () => {
    const { clock, chainA, chainB, a, b } = await twoDetectors();
    chainA.emitHead(block(3));
    chainB.emitHead(block(3));
    clock.advance(2_000);
    a.check();
    await a.settled();
    chainA.emitHead(block(4));
    chainA.emitHead(block(5));
    await a.settled();
    assert.deepEqual(
      (await rows(store)).map((row) => row.status),
      ['closed'],
    );
    // b's tracker lags: it judges the stall at 3 only now, its head polls not yet back.
    b.check();
    await b.settled();
    chainB.emitHead(block(4));
    chainB.emitHead(block(5));
    await b.settled();
    const all = await rows(store);
    assert.equal(all.length, 1, 'the stall at 3 once, not again by the late process');
    assert.equal(all[0]?.status, 'closed');
    await Promise.all([a.stop(), b.stop()]);
  });

  test('divergence: START after mismatches at two heights at or below head − finality_depth, END on agreement', async () => {
    await store.db.deleteFrom('chain_incidents').execute();
    const clock = new ManualClock(T0);
    const chain = new ScriptedChain();
    const detector = make(chain, clock, {}, 2);
    await detector.start();
    // Both agree up to 3; from 4 on, o2 is on branch b.
    for (let n = 1; n <= 3; n++) {
      chain.setOrigin('o1', block(n));
      chain.setOrigin('o2', block(n));
      chain.emitHead(block(n));
    }
    const fork = (n: number): BlockHead => forked(n, 'b', 4);
    for (let n = 4; n <= 6; n++) {
      chain.setOrigin('o1', block(n));
      chain.setOrigin('o2', fork(n));
      chain.emitHead(block(n));
    }
    await detector.settled();
    // Head 6, limit 4: one mismatching height (4) seen so far... and 5 is above the limit.
    assert.equal((await rows(store)).length, 0, 'one mismatching height is not enough');
    chain.setOrigin('o1', block(7));
    chain.setOrigin('o2', fork(7));
    chain.emitHead(block(7));
    await detector.settled();
    const all = await rows(store);
    assert.equal(all.length, 1);
    assert.equal(all[0]?.kind, 'origin_divergence');
    const data = JSON.parse(all[0]?.data ?? '{}');
    assert.deepEqual(data.origins, ['o1', 'o2']);
    assert.equal(data.block_number, 5);
    assert.deepEqual(data.hashes, { o1: hash(5), o2: hash(5, 'b') });
    const scope = JSON.parse(all[0]?.scope ?? '[]');
    assert.deepEqual(scope, [
      { account_id: 'acct-1', pool_id: 'pool-1', origin: 'o1' },
      { account_id: 'acct-1', pool_id: 'pool-1', origin: 'o2' },
    ]);
    // o2 becomes unhealthy: only one healthy origin is left, nothing diverges.
    chain.setOrigin('o2', fork(7), false);
    detector.check();
    await detector.settled();
    assert.equal((await rows(store))[0]?.status, 'closed');
    await detector.stop();
  });

  test('reorg: at least reorg_min_depth replaced blocks, one record per reorg across detectors', async () => {
    await store.db.deleteFrom('chain_incidents').execute();
    const clock = new ManualClock(T0);
    const chains = [new ScriptedChain(), new ScriptedChain()];
    const detectors = chains.map((chain) => make(chain, clock));
    for (const d of detectors) await d.start();
    for (const chain of chains) {
      for (const l of chain.listeners) {
        l.reorg?.('net', { forkPoint: 10, removed: [block(10)], beyondWindow: false });
        l.reorg?.('net', { forkPoint: 20, removed: [block(20), block(21), block(22)], beyondWindow: false });
      }
    }
    for (const d of detectors) await d.settled();
    const all = await rows(store);
    assert.equal(all.length, 1, 'depth 1 is below reorg_min_depth; the depth-3 reorg is recorded once');
    assert.equal(all[0]?.kind, 'reorg');
    assert.deepEqual(JSON.parse(all[0]?.data ?? '{}').depth, 3);
    assert.equal(JSON.parse(all[0]?.data ?? '{}').block_number, 20);
    for (const d of detectors) await d.stop();
  });

  test('finality stall: derived from the finalized block pace, at least the head-stall threshold', async () => {
    await store.db.deleteFrom('chain_incidents').execute();
    const clock = new ManualClock(T0);
    const chain = new ScriptedChain();
    const detector = make(chain, clock, { head_stall_after: 30_000 });
    await detector.start();
    for (let n = 1; n <= 4; n++) {
      clock.advance(5_000);
      chain.emitFinalized(block(n * 10));
    }
    // 3 × 5 s = 15 s, but never under head_stall_after (30 s).
    clock.advance(29_000);
    detector.check();
    await detector.settled();
    assert.equal((await rows(store)).filter((r) => r.kind === 'finality_stall').length, 0);
    clock.advance(1_000);
    detector.check();
    await detector.settled();
    const stall = (await rows(store)).filter((r) => r.kind === 'finality_stall');
    assert.equal(stall.length, 1);
    assert.equal(JSON.parse(stall[0]?.data ?? '{}').block_number, 40);
    assert.ok(chain.touched > 0, 'the detector keeps the finalized block fetched');
    await detector.stop();
  });
});
