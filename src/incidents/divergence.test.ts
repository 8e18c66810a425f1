/**
 * A divergence seen late: what `endedAfter` counts as an END another process already saw, and two
 * detectors on one store where the second one's view of the origins lags the first's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  block,
  forked,
  hash,
  incidentRows,
  ScriptedChain,
  scriptedDetector,
  T0,
} from '../../test/helpers/incident-chain.js';
import { openTestStore } from '../../test/helpers/store.js';
import { ManualClock } from '../clock.js';
import type { Store } from '../store/database.js';
import { Divergence, type DivergenceFinding, endedAfter } from './divergence.js';

describe('endedAfter', () => {
  const finding: DivergenceFinding = {
    number: 5,
    seenAt: 1_000,
    hashes: { o1: hash(5), o2: hash(5, 'b') },
    keys: ['p/o1', 'p/o2'],
  };

  test('covers a difference at or below a later agreement of the same origins', () => {
    assert.equal(endedAfter(finding, { number: 7, origins: ['o1', 'o2'], at: 2_000 }), true);
    assert.equal(endedAfter(finding, { number: 5, origins: ['o1', 'o2', 'o3'], at: 1_000 }), true);
  });

  test('does not cover a difference above the agreement, seen after it, among other origins, or without one', () => {
    assert.equal(endedAfter(finding, { number: 4, origins: ['o1', 'o2'], at: 2_000 }), false, 'above it');
    assert.equal(endedAfter(finding, { number: 7, origins: ['o1', 'o2'], at: 999 }), false, 'recorded after it');
    assert.equal(endedAfter(finding, { number: 7, origins: ['o1', 'o3'], at: 2_000 }), false, 'o2 was not in it');
    assert.equal(endedAfter(finding, { number: undefined, origins: [], at: 2_000 }), false, 'no usable origins');
  });

  test("a finding's seenAt is when the newest of its hashes was first recorded", () => {
    const divergence = new Divergence();
    const origins = ['o1', 'o2'].map((name) => ({ key: name, name, poolId: 'p', usable: true, header: undefined }));
    for (let n = 1; n <= 5; n++) divergence.sample('o1', block(n), 100 + n);
    divergence.sample('o2', block(3), 200);
    divergence.sample('o2', forked(4, 'b', 4), 300);
    divergence.sample('o2', forked(5, 'b', 4), 400);
    divergence.sample('o2', forked(5, 'b', 4), 900); // the same header again: no new record
    assert.equal(divergence.judge(origins, 4), undefined, 'one mismatching height');
    const change = divergence.judge(origins, 5);
    assert.equal(change?.kind, 'start');
    assert.equal(change?.kind === 'start' ? change.finding.seenAt : 0, 400);
  });
});

describe('a divergence seen late by a second process', () => {
  let store: Store;
  let close: () => Promise<void>;
  before(async () => {
    ({ store, close } = await openTestStore());
  });
  after(() => close());

  test('is not recorded again, and its END does not close a divergence opened since', async () => {
    const clock = new ManualClock(T0);
    const chainA = new ScriptedChain();
    const chainB = new ScriptedChain();
    const a = scriptedDetector(store, chainA, clock);
    const b = scriptedDetector(store, chainB, clock);
    await a.start();
    await b.start();
    const fork = (n: number) => forked(n, 'b', 4);
    // Both see the origins agree up to 3 and o2 on branch b from 4 to 7. b's head lags at 3 (limit 1):
    // it records each origin's header on its checks, but judges nothing above 1.
    for (let n = 1; n <= 7; n++) {
      for (const chain of [chainA, chainB]) {
        chain.setOrigin('o1', block(n));
        chain.setOrigin('o2', n < 4 ? block(n) : fork(n));
      }
      chainA.emitHead(block(n));
      if (n <= 3) chainB.emitHead(block(n));
      else b.check();
    }
    await Promise.all([a.settled(), b.settled()]);
    assert.deepEqual(
      (await incidentRows(store)).map((row) => row.status),
      ['open'],
      'a saw it (5 and 4 differ at head 7)',
    );

    // o2 goes back to branch a; a sees both agree at 7 (head 9) and ends it.
    clock.advance(5_000);
    for (const n of [8, 9]) {
      chainA.setOrigin('o1', block(n));
      chainA.setOrigin('o2', block(n));
      chainA.emitHead(block(n));
    }
    await a.settled();
    const ended = await incidentRows(store);
    assert.deepEqual(
      ended.map((row) => row.status),
      ['closed'],
    );
    assert.equal(JSON.parse(ended[0]?.end_data ?? '{}').block_number, 7);

    // b's head catches up only now: by its older records 4 and 5 differ. That divergence has ended.
    clock.advance(1_000);
    chainB.emitHead(block(6));
    chainB.emitHead(block(7));
    await b.settled();
    assert.equal((await incidentRows(store)).length, 1, 'not recorded a second time');

    // A new divergence above the agreement: o2 on branch c from 10. a records it.
    clock.advance(1_000);
    for (let n = 10; n <= 13; n++) {
      chainA.setOrigin('o1', block(n));
      chainA.setOrigin('o2', forked(n, 'c', 10));
      chainA.emitHead(block(n));
    }
    await a.settled();
    const second = await incidentRows(store);
    assert.deepEqual(
      second.map((row) => row.status),
      ['closed', 'open'],
      'a new divergence is recorded',
    );
    assert.equal(JSON.parse(second[1]?.data ?? '{}').block_number, 11);

    // b now sees o2 agree again at 7 (its view of the first divergence clearing): no news, and it must
    // not close the new one.
    for (const n of [8, 9]) {
      chainB.setOrigin('o1', block(n));
      chainB.setOrigin('o2', block(n));
      chainB.emitHead(block(n));
    }
    await b.settled();
    assert.deepEqual(
      (await incidentRows(store)).map((row) => row.status),
      ['closed', 'open'],
    );
    await Promise.all([a.stop(), b.stop()]);
  });
});
