import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeHealth, FakeNode, fakePool, fakeSource } from '../../test/helpers/fake-chain.js';
import { ManualClock } from '../clock.js';
import type { Pool } from '../model/pool.js';
import { StaticPoolDirectory } from '../routing/static-directory.js';
import { ChainTracker } from './tracker.js';
import { REPORTED_KEPT, TRUSTED_KEPT, TrustedHashes } from './trust.js';

/**
 * The trust anchor of SPEC §18 (trust.ts, network-anchor.ts): a quorum of pools or an operator's origin
 * makes a hash trusted, never one untrusted origin; trusted blocks vouch for their parents through the
 * canonical window when their headers hash right; heights nobody reported are asked of one origin per
 * pool, and a failed round is not repeated within the poll interval.
 */

const block = (number: number, hash: string) => ({ number, hash, header: { number: `0x${number.toString(16)}` } });
const hashOf = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

describe('TrustedHashes', () => {
  test('one pool, however many reports, trusts nothing; a second pool makes the quorum', () => {
    const trust = new TrustedHashes(2);
    assert.equal(trust.report(block(5, hashOf(5)), 'p1', false), undefined);
    assert.equal(trust.report(block(5, hashOf(5)), 'p1', false), undefined);
    assert.equal(trust.at(5), undefined);
    assert.equal(trust.report(block(5, `0x${'ee'.repeat(32)}`), 'p2', false), undefined, 'another hash is no vote');
    assert.equal(trust.report(block(5, hashOf(5)), 'p2', false)?.hash, hashOf(5));
    assert.equal(trust.tip?.number, 5);
  });

  test('a quorum of 3 needs three pools; an operator’s origin is enough alone', () => {
    const trust = new TrustedHashes(3);
    trust.report(block(7, hashOf(7)), 'p1', false);
    trust.report(block(7, hashOf(7)), 'p2', false);
    assert.equal(trust.at(7), undefined);
    trust.report(block(7, hashOf(7)), 'p3', false);
    assert.equal(trust.at(7)?.hash, hashOf(7));
    trust.report(block(9, hashOf(9)), 'p1', true);
    assert.equal(trust.tip?.hash, hashOf(9));
  });

  test('a quorum of 1 is read as 2: one untrusted origin is never enough', () => {
    const trust = new TrustedHashes(1);
    trust.report(block(1, hashOf(1)), 'p1', false);
    assert.equal(trust.at(1), undefined);
  });

  test('a height trusted again with another hash replaces it and drops the heights above', () => {
    const trust = new TrustedHashes(2);
    for (const n of [10, 11, 12]) trust.trust(block(n, hashOf(n)));
    trust.trust(block(11, `0x${'ab'.repeat(32)}`));
    assert.equal(trust.at(12), undefined);
    assert.equal(trust.at(11)?.hash, `0x${'ab'.repeat(32)}`);
    assert.equal(trust.tip?.number, 11);
  });

  test('bounded: made-up heights cannot grow the reports, and the lowest trusted heights go first', () => {
    const trust = new TrustedHashes(2);
    for (let n = 0; n < REPORTED_KEPT * 3; n += 1) trust.report(block(1_000_000 + n, hashOf(n)), 'liar', false);
    trust.report(block(1_000_000, hashOf(0)), 'p2', false);
    assert.equal(trust.at(1_000_000), undefined, 'the oldest report was dropped');
    for (let n = 0; n < TRUSTED_KEPT + 10; n += 1) trust.trust(block(n, hashOf(n)));
    assert.equal(trust.at(0), undefined);
    assert.equal(trust.at(TRUSTED_KEPT + 9)?.hash, hashOf(TRUSTED_KEPT + 9));
  });
});

function setup(
  nodes: Record<string, FakeNode>,
  pools: Pool[],
  options: { operators?: string[]; hashHeader?: (h: Readonly<Record<string, unknown>>) => string | undefined } = {},
) {
  const clock = new ManualClock(1_000_000);
  const source = fakeSource(nodes);
  const tracker = new ChainTracker({
    networks: {
      net: {
        pools: pools.map((p) => p.name),
        head_poll_interval: 1_000,
        verify_anchor: { origins: options.operators ?? [], quorum: 2 },
      },
    },
    directory: new StaticPoolDirectory(pools),
    health: new FakeHealth(),
    source,
    clock,
    ...(options.hashHeader === undefined ? {} : { hashHeader: options.hashHeader }),
  });
  return { clock, source, tracker };
}

/** A hasher that knows the honest chain: a header hashes to its hash only with the honest parent. */
const honestHasher = (honest: FakeNode) => (header: Readonly<Record<string, unknown>>) => {
  const real = honest.at(Number(header.number));
  return real !== undefined && header.parentHash === real.parentHash ? real.hash : `0x${'00'.repeat(32)}`;
};

describe('the tracker keeps the anchor', () => {
  test('two pools reporting the same head make it the trusted tip; one pool of two origins never does', async () => {
    const a = new FakeNode().mine(20);
    const b = new FakeNode().sync(a);
    const two = setup({ a, b }, [fakePool('one', ['a']), fakePool('two', ['b'])]);
    await two.tracker.refresh();
    assert.equal(two.tracker.trustedTip('net')?.hash, a.head.hash);
    const one = setup({ a, b }, [fakePool('one', ['a', 'b'])]);
    await one.tracker.refresh();
    assert.equal(one.tracker.trustedTip('net'), undefined);
    assert.equal(await one.tracker.anchor('net', 20), undefined, 'asking the pool’s origins changes nothing');
  });

  test('an operator’s origin (verify_anchor.origins) anchors a one-pool network', async () => {
    const a = new FakeNode().mine(20);
    const t = setup({ a }, [fakePool('one', ['a'])], { operators: ['one/a'] });
    await t.tracker.refresh();
    assert.equal(t.tracker.trustedTip('net')?.number, 20);
  });

  test('blocks below the trusted tip are trusted through their children’s headers, without asking', async () => {
    const a = new FakeNode().mine(40);
    const b = new FakeNode().sync(a);
    const t = setup({ a, b }, [fakePool('one', ['a']), fakePool('two', ['b'])], { hashHeader: honestHasher(a) });
    await t.tracker.refresh();
    a.mine(5);
    b.sync(a);
    await t.tracker.refresh();
    const asked = t.source.asked.length;
    // The window holds 40 (the first head) to 45; 40 and 45 were reported by both pools.
    assert.equal((await t.tracker.anchor('net', 41))?.hash, a.at(41)?.hash);
    assert.equal(t.tracker.trustedHash('net', 44), a.at(44)?.hash);
    assert.equal(t.source.asked.length, asked, `no origin asked: ${t.source.asked.slice(asked)}`);
  });

  test('a window header that does not hash to its hash vouches for nothing: the origins are asked', async () => {
    const a = new FakeNode().mine(40);
    const b = new FakeNode().sync(a);
    const t = setup({ a, b }, [fakePool('one', ['a']), fakePool('two', ['b'])], { hashHeader: () => undefined });
    await t.tracker.refresh();
    a.mine(3);
    b.sync(a);
    await t.tracker.refresh();
    const asked = t.source.asked.length;
    assert.equal((await t.tracker.anchor('net', 41))?.hash, a.at(41)?.hash);
    assert.deepEqual(t.source.asked.slice(asked).sort(), ['a:41', 'b:41']);
  });

  test('a height outside the window: one origin per pool asked; a liar in a third pool is outvoted', async () => {
    const a = new FakeNode().mine(300);
    const b = new FakeNode().sync(a);
    const liar = new FakeNode().sync(a);
    liar.blocks[10] = { ...(liar.blocks[10] as NonNullable<ReturnType<FakeNode['at']>>), hash: `0x${'11'.repeat(32)}` };
    const pools = [fakePool('lying', ['liar']), fakePool('one', ['a', 'a2']), fakePool('two', ['b'])];
    const t = setup({ a, a2: new FakeNode().sync(a), b, liar }, pools);
    await t.tracker.refresh();
    const asked = t.source.asked.length;
    assert.equal((await t.tracker.anchor('net', 10))?.hash, a.at(10)?.hash);
    const asks = t.source.asked.slice(asked);
    assert.ok(asks.length <= 4, asks.join(' '));
    assert.equal(asks.filter((ask) => ask.startsWith('a')).length, 1, `one origin of pool "one": ${asks.join(' ')}`);
    const again = t.source.asked.length;
    await t.tracker.anchor('net', 10);
    assert.equal(t.source.asked.length, again, 'kept');
  });

  test('no quorum: undefined, and not asked again within the poll interval', async () => {
    const a = new FakeNode().mine(300);
    const liar = new FakeNode().sync(a);
    liar.blocks[10] = { ...(liar.blocks[10] as NonNullable<ReturnType<FakeNode['at']>>), hash: `0x${'11'.repeat(32)}` };
    const t = setup({ a, liar }, [fakePool('lying', ['liar']), fakePool('one', ['a'])]);
    await t.tracker.refresh();
    assert.equal(await t.tracker.anchor('net', 10), undefined);
    const asked = t.source.asked.length;
    assert.equal(await t.tracker.anchor('net', 10), undefined);
    assert.equal(t.source.asked.length, asked);
    t.clock.advance(1_000);
    await t.tracker.anchor('net', 10);
    assert.ok(t.source.asked.length > asked);
  });
});
