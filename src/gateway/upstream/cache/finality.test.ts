import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../../../../test/helpers/anvil.js';
import { ManualClock } from '../../../clock.js';
import { blockSource } from './block-source.js';
import { type BlockSource, FinalityTracker } from './finality.js';

/** Finality tracking against a real anvil (finalized = latest − 64 there) and its `anvil_reorg`. */

let anvil: AnvilNode;
before(async () => {
  anvil = await startTestAnvil();
});
after(async () => {
  await anvil?.stop();
});

async function call(method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(anvil.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const answer = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (answer.error) throw new Error(answer.error.message);
  return answer.result;
}

const anvilSource: BlockSource = blockSource(async (_network, body) => {
  const res = await fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return Buffer.from(await res.arrayBuffer());
});

test('follows a real chain finality and finds how deep a reorg below it went', async () => {
  const reorgs: bigint[] = [];
  const finality = new FinalityTracker({ source: anvilSource, clock: new ManualClock(0), poll: false });
  finality.addListener({ reorg: (_network, height) => reorgs.push(height) });

  await call('anvil_mine', ['0x54']); // latest 84 → finalized 20
  await finality.refresh('sepolia');
  assert.equal(finality.finalized('sepolia'), 20n);
  await call('anvil_mine', ['0xa']); // → 30
  await finality.refresh('sepolia');
  await call('anvil_mine', ['0x14']); // → 50 (latest 114)
  await finality.refresh('sepolia');
  assert.equal(finality.finalized('sepolia'), 50n);
  assert.deepEqual(reorgs, []);

  // Replace the last 90 blocks (25..114): blocks 25..50 were "final" and now differ.
  await call('anvil_reorg', [90, []]);
  await finality.refresh('sepolia');
  // First at the height where the change was seen, then at the divergence the tracker could prove:
  // block 20 still matches, block 30 does not → everything from 21 on is suspect.
  assert.deepEqual(reorgs, [50n, 21n]);
  await finality.refresh('sepolia');
  assert.equal(finality.finalized('sepolia'), 50n);
  assert.deepEqual(reorgs, [50n, 21n], 'the new chain is accepted without further alarms');
  finality.close();
});

test('touch polls a network once while its finality is unknown; a chain without finality stays unknown', async () => {
  let calls = 0;
  const finality = new FinalityTracker({
    clock: new ManualClock(0),
    poll: false,
    source: async () => {
      calls += 1;
      return undefined; // e.g. an error answer to "finalized"
    },
  });
  finality.touch('l2');
  finality.touch('l2');
  await finality.refresh('l2');
  assert.equal(finality.finalized('l2'), undefined);
  assert.ok(calls >= 1 && calls <= 2, `polled ${calls} times`);
  finality.close();
});

/** A chain in memory: height → hash, with a finalized height; enough to drive the tracker's rules. */
function chain(finalized: bigint) {
  const blocks = new Map<bigint, string>();
  const state = { finalized, blocks, fork: '' };
  const hash = (n: bigint) => `0x${(state.fork + n.toString(16)).padStart(64, '0')}`;
  const rebuild = (upTo: bigint) => {
    for (let n = 0n; n <= upTo; n++) blocks.set(n, hash(n));
  };
  const source: BlockSource = async (_network, which) => {
    const n = which === 'finalized' ? state.finalized : which;
    const h = blocks.get(n);
    return h === undefined ? undefined : { number: n, hash: h };
  };
  return { state, rebuild, source };
}

test('a lagging origin reporting an older finalized block moves nothing back and raises no alarm', async () => {
  const c = chain(100n);
  c.rebuild(200n);
  const reorgs: bigint[] = [];
  const finality = new FinalityTracker({ source: c.source, clock: new ManualClock(0), poll: false });
  finality.addListener({ reorg: (_n, h) => reorgs.push(h) });
  await finality.refresh('net');
  c.state.finalized = 97n; // the next answer came from an origin three blocks behind
  await finality.refresh('net');
  assert.equal(finality.finalized('net'), 100n);
  assert.deepEqual(reorgs, []);
  finality.close();
});

test('a chain that went back (restarted devnet) drops everything: no remembered block matches', async () => {
  const c = chain(100n);
  c.rebuild(100n);
  const reorgs: bigint[] = [];
  const finality = new FinalityTracker({ source: c.source, clock: new ManualClock(0), poll: false });
  finality.addListener({ reorg: (_n, h) => reorgs.push(h) });
  for (const n of [60n, 80n, 100n]) {
    c.state.finalized = n;
    await finality.refresh('net');
  }
  // Restarted: a brand-new chain, only 10 blocks final so far.
  c.state.blocks.clear();
  c.state.fork = 'e';
  c.rebuild(12n);
  c.state.finalized = 10n;
  await finality.refresh('net');
  assert.deepEqual(reorgs, [100n, 0n]);
  assert.equal(finality.finalized('net'), 10n);
  finality.close();
});
