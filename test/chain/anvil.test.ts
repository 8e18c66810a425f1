/**
 * The chain tracker inside a real Switchyard (startApp → main.ts → gateway.ts) against real anvil nodes:
 * origins at different heights of one chain (`mineShared`), heads back-filled in order, a real reorg
 * (evm_snapshot, mine, evm_revert, mine another block) seen from its fork point, the metrics, and a killed
 * leading node dropping out of the network head once health ejects it. The reorg happens on the leading
 * node only, which no other origin can back: the operator trusts it (`verify_anchor.origins`, SPEC §20).
 * Polls every 25 ms; every wait is on a condition, bounded.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BlockHead, ChainReorg } from '../../src/chain/types.js';
import { type AnvilNode, mineShared, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { rpc } from '../helpers/http.js';

type Event = { head: BlockHead } | { reorg: ChainReorg };

async function call<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const { answer } = await rpc(url, method, params);
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
  return answer.result as T;
}

const blockOf = (url: string, n: number) =>
  call<{ hash: string; timestamp: string }>(url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false]);

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Heads rise by exactly one, except the first and the one right after a reorg (its fork point). */
function assertOrdered(events: readonly Event[]): void {
  let last: number | undefined;
  let fork: number | undefined;
  for (const event of events) {
    if ('reorg' in event) {
      fork = event.reorg.forkPoint;
      continue;
    }
    const n = event.head.number;
    if (fork !== undefined) assert.equal(n, fork, 'the first head after a reorg is its fork point');
    else if (last !== undefined) assert.equal(n, last + 1, `head ${n} follows ${last}`);
    last = n;
    fork = undefined;
  }
}

describe('the chain tracker on real anvil nodes', () => {
  let a: AnvilNode;
  let b: AnvilNode;
  let app: TestApp;
  const events: Event[] = [];

  before(async () => {
    [a, b] = await Promise.all([startTestAnvil(), startTestAnvil()]);
    await mineShared(a, 5);
    app = await startApp({
      networks: {
        sepolia: {
          chain_id: 11155111,
          pools: ['p'],
          head_poll_interval: '25ms',
          verify_anchor: { origins: ['p/o0'] },
        },
      },
      pools: [poolOf('p', [a.url, b.url])],
    });
    app.chain.addListener({
      head: (_network, head) => events.push({ head }),
      reorg: (_network, reorg) => events.push({ reorg }),
    });
  });

  after(async () => {
    await app?.close();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const state = (name: string) => app.chain.trackedOrigins('sepolia').find((o) => o.origin.name === name)?.state;

  it('knows each origin’s head and hash; the network head is the higher one', async () => {
    await waitFor(() => app.chain.networkHead('sepolia') === 5 && state('o1')?.head === 0, 'both origins polled');
    assert.equal(state('o0')?.hash, (await blockOf(a.url, 5)).hash);
    assert.equal(state('o1')?.hash, (await blockOf(b.url, 0)).hash);
    assert.equal(state('o0')?.earliest, 0);
    assert.equal(state('o0')?.syncing, false);

    await mineShared(b, 3); // blocks 1..3 of a's chain
    await waitFor(() => state('o1')?.head === 3, 'the lagging node to be seen at 3');
    assert.equal(state('o1')?.hash, (await blockOf(a.url, 3)).hash);
    assert.equal(app.chain.networkHead('sepolia'), 5);
  });

  it('emits every new head in order, back-filling blocks mined between two polls', async () => {
    await call(a.url, 'anvil_mine', ['0x4']); // 6..9 at once
    await waitFor(() => app.chain.canonicalHead('sepolia')?.number === 9, 'the canonical chain at 9');
    const heads = events.flatMap((e) => ('head' in e ? [e.head] : []));
    // The first head is whichever node answered first (the lagging one at 0 is on the same genesis).
    assert.deepEqual(heads.map((h) => h.number).slice(-5), [5, 6, 7, 8, 9]);
    for (const head of heads) assert.equal(head.hash, (await blockOf(a.url, head.number)).hash);
    assertOrdered(events);
  });

  it('a real reorg (snapshot, mine, revert, mine another block) is a reorg event from the fork point', async () => {
    const snapshot = await call<string>(a.url, 'evm_snapshot');
    await call(a.url, 'anvil_mine', ['0x3']); // 10..12
    await waitFor(() => app.chain.canonicalHead('sepolia')?.number === 12, 'the canonical chain at 12');
    const replaced = await Promise.all([10, 11, 12].map(async (n) => (await blockOf(a.url, n)).hash));
    const ten = await blockOf(a.url, 10);
    const seen = events.length;

    assert.equal(await call(a.url, 'evm_revert', [snapshot]), true);
    await call(a.url, 'evm_mine', [Number.parseInt(ten.timestamp, 16) + 1000]); // another block 10
    const newTen = (await blockOf(a.url, 10)).hash;
    assert.notEqual(newTen, replaced[0]);
    await waitFor(() => events.slice(seen).some((e) => 'head' in e), 'the new branch');

    const [first, second] = events.slice(seen);
    assert.ok(first !== undefined && 'reorg' in first, 'the reorg comes before the new branch');
    assert.equal(first.reorg.forkPoint, 10);
    assert.equal(first.reorg.beyondWindow, false);
    assert.deepEqual(
      first.reorg.removed.map((block) => block.hash),
      replaced,
    );
    assert.ok(second !== undefined && 'head' in second);
    assert.deepEqual([second.head.number, second.head.hash], [10, newTen]);

    await call(a.url, 'anvil_mine', ['0x2']);
    await waitFor(() => app.chain.canonicalHead('sepolia')?.number === 12, 'the new branch to grow');
    assertOrdered(events);
    assert.equal(events.filter((e) => 'reorg' in e).length, 1);
  });

  it('exposes the network head and each origin’s lag in /metrics, by names only', async () => {
    const text = await (await fetch(`${new URL(app.apiUrl).origin}/metrics`)).text();
    assert.match(text, /switchyard_chain_head\{network="sepolia"\} 12\n/);
    assert.match(text, /switchyard_chain_origin_head\{network="sepolia",pool="p",origin="o1"\} 3\n/);
    assert.match(text, /switchyard_chain_origin_lag_blocks\{network="sepolia",pool="p",origin="o1"\} 9\n/);
    assert.match(text, /switchyard_chain_reorgs_total\{network="sepolia"\} 1\n/);
    assert.ok(!text.includes('127.0.0.1'), 'no addresses');
  });

  it('a killed leading node leaves the network head once live traffic ejects it', async () => {
    await a.stop();
    // Calls go to either origin; the one that meets the dead node ejects it (connection refused).
    await waitFor(async () => {
      await rpc(app.rpcUrl(), 'eth_blockNumber', []);
      return app.chain.networkHead('sepolia') === 3;
    }, 'the network head to fall back to the live node');
    assert.equal(state('o0')?.head, 12, 'its last state is kept');
  });
});
