/**
 * No poisoned cache (SPEC §20), in a whole Switchyard with its response cache, against a real anvil
 * (10 blocks mined after the start, so the tracker's canonical window holds them; block 0 is final from
 * the start).
 * The network `sepolia` has two pools, `lying` first (a lying proxy in front of the anvil:
 * test/helpers/lying-origin.ts) then `honest` (the anvil itself); the network `solo` has only another
 * lying proxy.
 *   - A block by hash answered with another hash is a bad answer: the honest origin answers instead,
 *     the client never sees the lie.
 *   - Where no other origin answers, that lie passes through, but is never kept: once the origin is
 *     honest again, the real block comes back (and is kept from then on).
 *   - A block by number whose hash is not the canonical chain's passes through uncached: asked again
 *     after the origin turned honest, the real block comes back (and is kept from then on).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, waitFor } from '../helpers/devnet-chain.js';
import { blockHashLie, blockNumberLie, type LyingOrigin, startLyingOrigin } from '../helpers/lying-origin.js';

interface Block {
  number: string;
  hash: string;
  miner: string;
}

let node: AnvilNode;
let liar: LyingOrigin;
let soloLiar: LyingOrigin;
let app: TestApp;

async function cacheEntries(): Promise<number> {
  const text = await (await fetch(`${new URL(app.apiUrl).origin}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('switchyard_gateway_cache_entries '));
  return Number(line?.split(' ').pop() ?? 0);
}

const real = (n: number) => call<Block>(node.url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false]);

before(async () => {
  node = await startTestAnvil();
  liar = await startLyingOrigin(node.url);
  soloLiar = await startLyingOrigin(node.url);
  app = await startApp({
    networks: {
      sepolia: { chain_id: 11155111, pools: ['lying', 'honest'], head_poll_interval: '50ms' },
      solo: { chain_id: 11155111, pools: ['lying-solo'], head_poll_interval: '50ms' },
    },
    pools: [
      { name: 'lying', origins: [{ name: 'liar', address: liar.url }] },
      { name: 'honest', origins: [{ name: 'honest', address: node.url }] },
      { name: 'lying-solo', origins: [{ name: 'alone', address: soloLiar.url }] },
    ],
  });
  await waitFor(() => app.chain.canonicalHead('sepolia') !== undefined, 'the first head');
  await call(node.url, 'anvil_mine', ['0xa']);
  await waitFor(
    () => app.chain.canonicalHead('sepolia')?.number === 10 && app.chain.canonicalHead('solo')?.number === 10,
    'block 10 adopted',
  );
});

after(async () => {
  await app?.close();
  await liar?.close();
  await soloLiar?.close();
  await node?.stop();
});

describe('no poisoned cache', () => {
  it('a block by hash answered with another hash: the next origin answers, the client never sees it', async () => {
    const block = await real(5);
    liar.lie = blockHashLie();
    const told = liar.lies;
    for (let i = 0; i < 5; i += 1) {
      const got = await call<Block>(app.rpcUrl(), 'eth_getBlockByHash', [block.hash, i % 2 === 0]);
      assert.equal(got.hash, block.hash);
      assert.equal(got.miner, block.miner);
    }
    assert.ok(liar.lies > told, 'the lying pool was asked first');
    liar.lie = undefined;
  });

  it('with no other origin the lie passes through, but is never kept', async () => {
    const block = await real(6);
    soloLiar.lie = blockHashLie();
    const lied = await call<Block>(app.rpcUrl('solo'), 'eth_getBlockByHash', [block.hash, false]);
    assert.notEqual(lied.hash, block.hash, 'the only answer there is');
    soloLiar.lie = undefined;
    const honest = await call<Block>(app.rpcUrl('solo'), 'eth_getBlockByHash', [block.hash, false]);
    assert.equal(honest.hash, block.hash, 'not served from the cache');
    soloLiar.lie = blockHashLie();
    const kept = await call<Block>(app.rpcUrl('solo'), 'eth_getBlockByHash', [block.hash, false]);
    assert.deepEqual(kept, honest, 'the real block was kept');
    soloLiar.lie = undefined;
  });

  it('a block by number that is not the canonical block passes through uncached', async () => {
    // Block 0 is final (the tracker fetched finality at start), so an answer that is the chain's block 0
    // is kept: only the hash check keeps the lie out.
    await waitFor(() => app.chain.finalized('sepolia') !== undefined, 'finality known');
    const block = await real(0);
    liar.lie = blockNumberLie();
    const entries = await cacheEntries();
    const lied = await call<Block>(app.rpcUrl(), 'eth_getBlockByNumber', ['0x0', false]);
    assert.notEqual(lied.hash, block.hash, 'the lying pool answered (by number the answer passes through)');
    assert.equal(await cacheEntries(), entries, 'and nothing was kept');
    liar.lie = undefined;
    const honest = await call<Block>(app.rpcUrl(), 'eth_getBlockByNumber', ['0x0', false]);
    assert.equal(honest.hash, block.hash);
    assert.equal(honest.miner, block.miner);
    assert.equal(await cacheEntries(), entries + 1, 'the real block is kept');
    liar.lie = blockNumberLie();
    assert.deepEqual(await call<Block>(app.rpcUrl(), 'eth_getBlockByNumber', ['0x0', false]), honest, 'kept');
    liar.lie = undefined;
  });
});
