import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BlockHead } from '../chain/types.js';
import { ManualClock } from '../clock.js';
import { silentLogger } from '../log.js';
import type { Pool } from '../model/pool.js';
import { PoolSnapshot } from '../model/pool-snapshot.js';
import type { ChainFeedbackBatch, PushedChain } from './messages.js';
import { ReplicaChain, TOUCH_EVERY_MS } from './replica-chain.js';

function block(number: number, fork = 'a'): BlockHead {
  const hash = `0x${fork}${number.toString(16).padStart(63, '0')}`;
  return { number, hash, parentHash: '0x', timestamp: number, header: { number: `0x${number.toString(16)}` } };
}

const pool = {
  id: 'p1',
  account_id: 'acct',
  name: 'primary',
  enabled: true,
  origins: [{ name: 'o', address: 'http://127.0.0.1:1', enabled: true, weight: 1, header: {} }],
} as unknown as Pool;

const pushed: PushedChain = {
  networks: { sepolia: { head: 10, reported: 9, finalized: undefined, tracked: [['p1', 'o', true, false]] } },
  origins: [['p1', 'o', { head: 10, hash: undefined, earliest: 0, syncing: false, refused: false }]],
};

function replica() {
  const directory = new PoolSnapshot({ accountId: 'acct' });
  directory.replace([pool]);
  const sent: ChainFeedbackBatch[] = [];
  const clock = new ManualClock(0);
  const chain = new ReplicaChain({
    directory,
    clock,
    logger: silentLogger,
    chain: structuredClone(pushed),
    canonical: { sepolia: [block(9), block(10)] },
    feedback: (batch) => sent.push(batch),
    request: async () => block(7),
  });
  return { chain, sent, clock };
}

test('reads come from the pushed state; tracked origins resolve to the replica directory pools', () => {
  const { chain } = replica();
  assert.equal(chain.networkHead('sepolia'), 10);
  assert.equal(chain.origin('p1', 'o')?.head, 10);
  assert.equal(chain.origin('p1', 'x'), undefined);
  assert.equal(chain.reportedHead('sepolia'), 9);
  const [tracked] = chain.trackedOrigins('sepolia');
  assert.equal(tracked?.pool.name, 'primary');
  assert.equal(tracked?.usable, true);
  assert.deepEqual(chain.networks(), ['sepolia']);
});

test('events keep the canonical window and reach listeners in order', () => {
  const { chain } = replica();
  const heard: string[] = [];
  chain.addListener({
    head: (network, head) => heard.push(`${network} head ${head.number}`),
    reorg: (_network, reorg) => heard.push(`reorg at ${reorg.forkPoint}`),
    finalized: (_network, head) => heard.push(`finalized ${head.number}`),
  });
  chain.event({ t: 'chain-event', network: 'sepolia', event: 'head', block: block(11) });
  chain.event({
    t: 'chain-event',
    network: 'sepolia',
    event: 'reorg',
    reorg: { forkPoint: 10, removed: [block(10), block(11)], beyondWindow: false },
  });
  chain.event({ t: 'chain-event', network: 'sepolia', event: 'head', block: block(10, 'b') });
  chain.event({ t: 'chain-event', network: 'sepolia', event: 'finalized', block: block(5) });
  assert.deepEqual(heard, ['sepolia head 11', 'reorg at 10', 'sepolia head 10', 'finalized 5']);
  assert.deepEqual(
    chain.canonical('sepolia').map((head) => head.hash),
    [block(9).hash, block(10, 'b').hash],
  );
  assert.equal(chain.canonicalHead('sepolia')?.hash, block(10, 'b').hash);
  assert.equal(chain.finalized('sepolia')?.number, 5);
  chain.stop();
  chain.event({ t: 'chain-event', network: 'sepolia', event: 'head', block: block(11, 'b') });
  assert.equal(heard.length, 4, 'nothing after stop');
});

test('feedback applies locally at once and goes to the control batched (max per origin, touch throttled)', () => {
  const { chain, sent, clock } = replica();
  chain.sawHead('p1', 'o', 12);
  chain.sawHead('p1', 'o', 11);
  chain.sawHead('p1', 'o', 13);
  chain.sawHead('p9', 'o', 99); // not tracked: ignored
  chain.lacksBlock('p1', 'o', 3);
  chain.reported('sepolia', 12);
  chain.reported('sepolia', 11);
  chain.touch('sepolia');
  chain.touch('sepolia');
  assert.equal(chain.origin('p1', 'o')?.head, 13);
  assert.equal(chain.reportedHead('sepolia'), 12);
  chain.flush();
  assert.deepEqual(sent, [
    { saw: [['p1', 'o', 13]], lacks: [['p1', 'o', 3]], reported: [['sepolia', 12]], touched: ['sepolia'] },
  ]);
  clock.advance(TOUCH_EVERY_MS);
  chain.touch('sepolia');
  chain.flush();
  chain.flush();
  assert.deepEqual(sent[1], { saw: [], lacks: [], reported: [], touched: ['sepolia'] });
  assert.equal(sent.length, 2, 'an empty batch is not sent');
  chain.stop();
});

test('a push replaces the state; the reported head never goes below what this worker reported', () => {
  const { chain } = replica();
  chain.reported('sepolia', 20);
  const next = structuredClone(pushed);
  (next.networks.sepolia as { reported: number }).reported = 15;
  next.origins = [['p1', 'o', { head: 16, hash: '0xabc', earliest: 4, syncing: false, refused: false }]];
  chain.replace(next);
  assert.equal(chain.reportedHead('sepolia'), 20);
  assert.equal(chain.origin('p1', 'o')?.earliest, 4);
  chain.stop();
});

test('block() asks the control', async () => {
  const { chain } = replica();
  assert.equal((await chain.block('sepolia', 7))?.number, 7);
  chain.stop();
});

test('the head ceiling: pushed as a bound on the wall clock; no local head or reported head above it', () => {
  const { chain, sent, clock } = replica();
  const next = structuredClone(pushed);
  (next.networks.sepolia as { bound?: unknown }).bound = { tip: 10, since: clock.now(), intervalMs: 1000 };
  chain.replace(next);
  assert.equal(chain.headCeiling('sepolia'), 18, 'the tip + 8 right after it was adopted');
  chain.sawHead('p1', 'o', 1_000_000);
  assert.equal(chain.origin('p1', 'o')?.head, 10, 'above the ceiling: not taken here');
  chain.flush();
  assert.deepEqual(sent.at(-1)?.saw, [['p1', 'o', 1_000_000]], 'but sent on: the control counts it');
  chain.reported('sepolia', 1_000_000);
  assert.equal(chain.reportedHead('sepolia'), 9);
  chain.sawHead('p1', 'o', 18);
  assert.equal(chain.origin('p1', 'o')?.head, 18, 'up to the ceiling it is');
  clock.advance(1000);
  assert.equal(chain.headCeiling('sepolia'), 28, 'a block interval later, 10 blocks more');
  assert.equal(chain.canonicalHash('sepolia', 9), block(9).hash);
  assert.equal(chain.canonicalHash('sepolia', 8), undefined, 'below the window');
});

test('a refused origin takes no head from answers', () => {
  const { chain } = replica();
  const next = structuredClone(pushed);
  next.origins = [['p1', 'o', { head: 10, hash: undefined, earliest: 0, syncing: false, refused: true }]];
  chain.replace(next);
  chain.sawHead('p1', 'o', 11);
  assert.deepEqual([chain.origin('p1', 'o')?.head, chain.origin('p1', 'o')?.refused], [10, true]);
});
