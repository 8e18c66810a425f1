import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../../../../test/helpers/anvil.js';
import { FakeHealth, fakePool } from '../../../../test/helpers/fake-chain.js';
import { ChainTracker } from '../../../chain/tracker.js';
import { ManualClock } from '../../../clock.js';
import { BufferPool } from '../../../http1/index.js';
import { StaticPoolDirectory } from '../../../routing/static-directory.js';
import { GatewayChainSource } from '../chain-source.js';
import { OriginClients } from '../origin-clients.js';
import { finalityFromChain } from './chain-finality.js';

/**
 * The cache's finality fed by the chain tracker, against a real anvil (finalized = latest − 64 there):
 * the tracker fetches the finalized block once the cache touches the network, the FinalityTracker takes
 * it, and after `anvil_reorg` past finality its conflict search reads blocks through the tracker.
 * The tracker runs on a manual clock and `refresh()`, so each round is one awaited step.
 */

let anvil: AnvilNode;
let clients: OriginClients;
before(async () => {
  anvil = await startTestAnvil();
  clients = new OriginClients({ connectionsPerOrigin: 2, connectTimeoutMs: 2_000, buffers: new BufferPool() });
});
after(async () => {
  await clients?.close();
  await anvil?.stop();
});

async function call(method: string, params: unknown[]): Promise<void> {
  const res = await fetch(anvil.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const answer = (await res.json()) as { error?: { message: string } };
  if (answer.error) throw new Error(answer.error.message);
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test('finality comes from the chain tracker, and a reorg past it is searched through the tracker', async () => {
  const pool = fakePool('p', ['node']);
  pool.origins[0]!.address = anvil.url;
  const clock = new ManualClock(0);
  const tracker = new ChainTracker({
    networks: { sepolia: { pools: ['p'], head_poll_interval: 1_000 } },
    directory: new StaticPoolDirectory([pool]),
    health: new FakeHealth(),
    source: new GatewayChainSource({ clients, timeoutMs: 2_000 }),
    clock,
  });
  const { finality, close } = finalityFromChain(tracker);
  const reorgs: bigint[] = [];
  finality.addListener({ reorg: (_network, height) => reorgs.push(height) });

  await call('anvil_mine', ['0x54']); // latest 84 → finalized 20
  await tracker.refresh();
  assert.equal(finality.finalized('sepolia'), undefined, 'not in use yet: nothing fetched');
  finality.touch('sepolia');
  await waitFor(() => finality.finalized('sepolia') === 20n, 'finalized block 20');

  for (const blocks of ['0xa', '0x14']) {
    await call('anvil_mine', [blocks]); // → 30, → 50 (latest 114)
    clock.advance(12_000);
    await tracker.refresh();
  }
  assert.equal(finality.finalized('sepolia'), 50n);
  assert.deepEqual(reorgs, []);

  // Replace the last 90 blocks (25..114): blocks 25..50 were "final" and now differ.
  await call('anvil_reorg', [90, []]);
  clock.advance(12_000);
  await tracker.refresh();
  // Seen at the height that changed, then the divergence found by reading remembered heights through the
  // tracker: block 20 still matches, block 30 does not → everything from 21 on is suspect.
  await waitFor(() => reorgs.length === 2, 'the divergence search');
  assert.deepEqual(reorgs, [50n, 21n]);
  assert.equal(finality.finalized('sepolia'), 50n);
  close();
});
