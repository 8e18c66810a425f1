/**
 * A node restarted with a new chain (another genesis), found below the tracker's window of 128 blocks:
 * a real anvil mined past the window, stopped, and replaced on the same port by a fresh anvil with
 * another genesis timestamp. The canonical chain must start again on it (a reorg from block 0, then its
 * heads), not wait until the new chain passes the old height. Every wait is on a condition, bounded.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CANONICAL_WINDOW } from '../../src/chain/canonical.js';
import type { BlockHead, ChainReorg } from '../../src/chain/types.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/devnet-chain.js';
import { rpc } from '../helpers/http.js';

describe('a node restarted with a new chain, below the window', () => {
  let node: AnvilNode;
  let app: TestApp;
  const heads: BlockHead[] = [];
  const reorgs: ChainReorg[] = [];
  const OLD_HEIGHT = CANONICAL_WINDOW + 72;

  before(async () => {
    node = await startTestAnvil({ timestamp: 1_700_000_000 });
    await rpc(node.url, 'anvil_mine', [`0x${OLD_HEIGHT.toString(16)}`]);
    app = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['p'], head_poll_interval: '25ms' } },
      pools: [poolOf('p', [node.url])],
    });
    app.chain.addListener({
      head: (_network, head) => heads.push(head),
      reorg: (_network, reorg) => reorgs.push(reorg),
    });
  });

  after(async () => {
    await app?.close();
    await node?.stop();
  });

  it('starts the canonical chain again from block 0 of the new chain', async () => {
    await waitFor(() => app.chain.networkHead('sepolia') === OLD_HEIGHT, 'the old head', 20_000);
    const port = node.port;
    await node.stop();
    node = await startTestAnvil({ port, timestamp: 1_800_000_000 });
    await rpc(node.url, 'anvil_mine', ['0x3']);
    await waitFor(() => reorgs.length === 1 && heads.at(-1)?.number === 3, 'the new chain’s head 3', 20_000);
    const [reorg] = reorgs;
    assert.equal(reorg?.forkPoint, 0);
    assert.equal(reorg?.beyondWindow, true);
    assert.equal(reorg?.removed.at(-1)?.number, OLD_HEIGHT);
    // After the reorg: the new chain from its block 0, in order.
    const after = heads.slice(heads.findIndex((head) => head.number === 0));
    assert.deepEqual(
      after.map((head) => head.number),
      [0, 1, 2, 3],
    );
    const { answer } = await rpc(node.url, 'eth_getBlockByNumber', ['0x3', false]);
    assert.equal(after.at(-1)?.hash, (answer.result as { hash: string }).hash);
  });
});
