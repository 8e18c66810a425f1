/**
 * Routing around pruned state (SPEC §9), with real anvil nodes: one behind a pruned-origin fixture that
 * answers state reads below block 5 with geth's (then erigon's) real missing-state error, one marked
 * `archive: true`. Historical reads through the gateway all succeed (a missing-data answer is retried on the
 * next origin), the tracker learns the pruned node's earliest block (reads below it stop reaching the
 * pruned node), and reads the pruned node can serve still go to it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { rpc } from '../helpers/http.js';
import { type PrunedFlavour, type PrunedOrigin, startPrunedOrigin } from '../helpers/pruned-origin.js';

const DEV_ACCOUNT = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const START_BALANCE = '0x21e19e0c9bab2400000'; // 10 000 ETH: anvil's dev accounts, untouched here

for (const flavour of ['geth', 'erigon'] as PrunedFlavour[]) {
  describe(`a pruned ${flavour} origin beside an archive origin`, () => {
    let nodes: AnvilNode[];
    let pruned: PrunedOrigin;
    let app: TestApp;

    before(async () => {
      nodes = await Promise.all([startTestAnvil(), startTestAnvil()]);
      for (const node of nodes) await rpc(node.url, 'anvil_mine', ['0xa']);
      pruned = await startPrunedOrigin({ upstream: (nodes[0] as AnvilNode).url, earliest: 5, flavour });
      app = await startApp({
        networks: { sepolia: { chain_id: 11155111, pools: ['mixed'], head_poll_interval: '50ms' } },
        pools: [
          {
            name: 'mixed',
            origins: [
              { name: 'pruned', address: pruned.url },
              { name: 'archive', address: (nodes[1] as AnvilNode).url, archive: true },
            ],
          },
        ],
      });
    });

    after(async () => {
      await app?.close();
      await pruned?.close();
      await Promise.all(nodes?.map((node) => node.stop()) ?? []);
    });

    it('answers every historical read, learns what the pruned node lacks, and stops asking it', async () => {
      const read = async (block: number) => {
        const res = await rpc(app.rpcUrl(), 'eth_getBalance', [DEV_ACCOUNT, `0x${block.toString(16)}`]);
        assert.equal(res.answer.result, START_BALANCE, `block ${block}: ${JSON.stringify(res.answer)}`);
      };
      // Reads at block 4 succeed whichever node steering picks first; once one lands on the pruned node
      // (its missing-state error is retried on the archive node), the tracker knows it lacks 0..4.
      for (let i = 0; pruned.missingAnswers === 0; i += 1) {
        assert.ok(i < 100, 'steering never picked the pruned node');
        await read(4);
      }
      const state = app.chain.trackedOrigins('sepolia').find((tracked) => tracked.origin.name === 'pruned')?.state;
      assert.equal(state?.earliest, 5);
      for (let i = 0; i < 40; i += 1) await read(i % 5);
      assert.equal(pruned.missingAnswers, 1, 'the pruned node was not asked again for data it lacks');
    });

    it('still sends reads the pruned node can serve to it', async () => {
      const before = pruned.forwardedOf('eth_getBalance');
      for (let i = 0; i < 30; i += 1) {
        const res = await rpc(app.rpcUrl(), 'eth_getBalance', [DEV_ACCOUNT, '0x7']);
        assert.equal(res.answer.result, START_BALANCE);
      }
      assert.ok(pruned.forwardedOf('eth_getBalance') > before, 'the pruned node took some reads at block 7');
    });
  });
}
