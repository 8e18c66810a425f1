/**
 * Head-aware routing and the monotonic head (SPEC §9), with two real anvil nodes on one chain that take
 * turns leading: blocks are mined on one node or the other (`mineShared`: the same blocks on both, as
 * nodes of one network have), so their heights keep crossing. Through the gateway (random steering):
 *   - 200 eth_blockNumber calls, mixed with mining, never go down;
 *   - a block only the leading node has is never answered null.
 * Without the chain tracker, each call would land on either node and both rules would break at once.
 * A node jumps at most a few blocks past the other, as nodes of a live network do: a burst further ahead
 * of the adopted head than the head ceiling allows (SPEC §20) is refused for a while, by design
 * (src/chain/adoption.test.ts), and its origin counts as lagging meanwhile.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AnvilNode, mineShared } from '../helpers/anvil.js';
import { type AnvilPair, startAnvilPair, type TestApp } from '../helpers/app.js';
import { rpc } from '../helpers/http.js';

let pair: AnvilPair;
let nodes: AnvilNode[];
let app: TestApp;

async function mine(node: AnvilNode, blocks: number): Promise<void> {
  await mineShared(node, (await height(node.url)) + blocks);
}

/** Mines `node` to `ahead` blocks past the highest node. */
async function lead(node: AnvilNode, ahead: number): Promise<void> {
  const [a, b] = nodes as [AnvilNode, AnvilNode];
  await mineShared(node, Math.max(await height(a.url), await height(b.url)) + ahead);
}

async function height(url: string): Promise<number> {
  const answer = await rpc(url, 'eth_blockNumber');
  assert.equal(typeof answer.answer.result, 'string', JSON.stringify(answer.answer));
  return Number(answer.answer.result);
}

before(async () => {
  pair = await startAnvilPair({ head_poll_interval: '50ms' });
  ({ nodes, app } = pair);
});

after(() => pair?.close());

describe('one chain that only moves forward', () => {
  it('200 eth_blockNumber calls never decrease while the nodes take turns leading', async () => {
    const [a, b] = nodes as [AnvilNode, AnvilNode];
    await mine(a, 3);
    let last = -1;
    const seen: number[] = [];
    for (let i = 0; i < 200; i += 1) {
      // Every 25 calls the other node jumps 2 to 4 blocks past the leading one.
      if (i % 25 === 24) await lead(i % 50 === 24 ? b : a, 2 + (((i / 25) | 0) % 3));
      const n = await height(app.rpcUrl());
      seen.push(n);
      assert.ok(n >= last, `eth_blockNumber went back from ${last} to ${n} at call ${i}: ${seen.slice(-10).join(' ')}`);
      last = n;
    }
    // It follows the leading node: within a few polls it reports the highest height.
    const top = Math.max(await height(a.url), await height(b.url));
    const deadline = Date.now() + 5000;
    while ((await height(app.rpcUrl())) < top) assert.ok(Date.now() < deadline, `never reported ${top}`);
  });

  it('never answers null for a block only the leading node has', async () => {
    const [a, b] = nodes as [AnvilNode, AnvilNode];
    for (let round = 0; round < 5; round += 1) {
      const leader = round % 2 === 0 ? a : b;
      const other = leader === a ? b : a;
      const target = Math.max(await height(a.url), await height(b.url)) + 2;
      await mine(leader, target - (await height(leader.url)));
      assert.ok((await height(other.url)) < target, 'the other node does not have the block');
      // The client sees the new head through the gateway (once the tracker has polled the leader), then
      // asks for that block, 10 times.
      const deadline = Date.now() + 5000;
      while ((await height(app.rpcUrl())) < target)
        assert.ok(Date.now() < deadline, `the gateway never reported ${target}`);
      for (let i = 0; i < 10; i += 1) {
        const block = await rpc(app.rpcUrl(), 'eth_getBlockByNumber', [`0x${target.toString(16)}`, false]);
        assert.notEqual(block.answer.result, null, `block ${target} answered null (round ${round}, call ${i})`);
        assert.equal(Number((block.answer.result as { number: string }).number), target);
      }
    }
  });
});
