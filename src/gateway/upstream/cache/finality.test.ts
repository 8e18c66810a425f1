import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../../../../test/helpers/anvil.js';
import { type BlockSource, FinalityTracker } from './finality.js';

/**
 * Finality tracking against a real anvil (finalized = latest − 64 there) and its `anvil_reorg`. Here the
 * tracker pulls through its source (`refresh`); chain-finality.test.ts feeds it from the chain tracker.
 */

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

const anvilSource: BlockSource = async (_network, which) => {
  const tag = which === 'finalized' ? 'finalized' : `0x${which.toString(16)}`;
  const block = (await call('eth_getBlockByNumber', [tag, false])) as { number: string; hash: string } | null;
  return block === null ? undefined : { number: BigInt(block.number), hash: block.hash };
};

test('follows a real chain finality and finds how deep a reorg below it went', async () => {
  const reorgs: bigint[] = [];
  const finality = new FinalityTracker({ source: anvilSource });
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
});

test('touch only tells the feeder the network is in use; a chain without finality stays unknown', async () => {
  const demanded: string[] = [];
  let asked = 0;
  const finality = new FinalityTracker({
    demand: (network) => demanded.push(network),
    source: async () => {
      asked += 1;
      return undefined; // e.g. an error answer to "finalized"
    },
  });
  finality.touch('l2');
  finality.touch('l2');
  assert.deepEqual(demanded, ['l2', 'l2']);
  assert.equal(asked, 0, 'no request of its own: the chain tracker fetches');
  await finality.refresh('l2');
  assert.equal(finality.finalized('l2'), undefined);
});

test('observed finalized blocks move finality up; a lower one from a lagging origin moves nothing', async () => {
  const c = chain(100n);
  c.rebuild(120n);
  const reorgs: bigint[] = [];
  const finality = new FinalityTracker({ source: c.source });
  finality.addListener({ reorg: (_n, h) => reorgs.push(h) });
  await finality.observe('net', { number: 90n, hash: c.state.blocks.get(90n)! });
  await finality.observe('net', { number: 100n, hash: c.state.blocks.get(100n)!.toUpperCase().replace('0X', '0x') });
  assert.equal(finality.finalized('net'), 100n);
  await finality.observe('net', { number: 97n, hash: c.state.blocks.get(97n)! });
  assert.equal(finality.finalized('net'), 100n);
  assert.deepEqual(reorgs, []);
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
  const finality = new FinalityTracker({ source: c.source });
  finality.addListener({ reorg: (_n, h) => reorgs.push(h) });
  await finality.refresh('net');
  c.state.finalized = 97n; // the next answer came from an origin three blocks behind
  await finality.refresh('net');
  assert.equal(finality.finalized('net'), 100n);
  assert.deepEqual(reorgs, []);
});

test('a chain that went back (restarted devnet) drops everything: no remembered block matches', async () => {
  const c = chain(100n);
  c.rebuild(100n);
  const reorgs: bigint[] = [];
  const finality = new FinalityTracker({ source: c.source });
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
});
