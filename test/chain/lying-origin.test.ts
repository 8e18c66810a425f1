/**
 * No single origin moves the chain (SPEC §20), in a whole Switchyard against a real anvil that mines a
 * block every second. The pool `mixed` has two origins: `liar`, a lying proxy in front of that anvil
 * (test/helpers/lying-origin.ts), listed first, and `honest`, the anvil itself; a jsonrpc monitor probes
 * both every second (one failure marks an origin Unhealthy). In turn the liar claims a far head (block
 * 1,000,000), a forked head (the real height, a made-up hash) and a head that does not link (one block
 * ahead on a made-up parent), each time with a made-up balance at `latest` (the fork only while the chain
 * stands still: see the test). Meanwhile:
 *   - clients never see the lie: every eth_blockNumber, `latest` block and eth_getBalance at `latest` is
 *     the anvil's own;
 *   - the liar's claim is refused and counted (switchyard_chain_head_refused_total), and the liar counts
 *     as refused;
 *   - newHeads subscribers get the real chain, every block once, in order;
 *   - the honest origin stays Healthy, and no chain incident is raised (head_stall_after is 3 s, so a
 *     captured chain would page within the test);
 *   - the network `solo`, whose lone origin is another such liar, still follows it.
 * Every wait is on a condition, bounded.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, waitFor } from '../helpers/devnet-chain.js';
import {
  type Ask,
  anyOf,
  assertRealHead,
  balanceLie,
  type HeadLieKind,
  headLie,
  type LyingOrigin,
  startLyingOrigin,
} from '../helpers/lying-origin.js';

const PROBE = '0x00000000000000000000000000000000000000aa';
const REAL_BALANCE = '0x1234';
const FAKE_BALANCE = '0xdeadbeef';

let node: AnvilNode;
let liar: LyingOrigin;
let soloLiar: LyingOrigin;
let app: TestApp;
let ws: WebSocket;
const heads: Array<{ number: string; hash: string }> = [];

async function refusedCount(origin: string): Promise<number> {
  const text = await (await fetch(`${new URL(app.apiUrl).origin}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`switchyard_chain_head_refused_total{network="sepolia",origin="${origin}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

const tracked = (name: string) => app.chain.trackedOrigins('sepolia').find((o) => o.origin.name === name);

before(async () => {
  node = await startTestAnvil({ blockTime: 1 });
  await call(node.url, 'anvil_setBalance', [PROBE, REAL_BALANCE]);
  liar = await startLyingOrigin(node.url);
  soloLiar = await startLyingOrigin(node.url, headLie('far'));
  const monitor = { type: 'jsonrpc', interval: 1, timeout: 1, consecutive_down: 1, consecutive_up: 1 };
  app = await startApp({
    networks: {
      sepolia: { chain_id: 11155111, pools: ['mixed'], head_poll_interval: '50ms', incidents: { head_stall_after: 3 } },
      solo: { chain_id: 11155111, pools: ['solo'], head_poll_interval: '50ms' },
    },
    pools: [
      {
        name: 'mixed',
        origins: [
          { name: 'liar', address: liar.url },
          { name: 'honest', address: node.url },
        ],
        monitor,
      },
      { name: 'solo', origins: [{ name: 'alone', address: soloLiar.url }] },
    ],
  });
  await waitFor(() => tracked('honest')?.usable === true && app.chain.networkHead('sepolia') !== undefined, 'a head');
  ws = new WebSocket(app.rpcUrl().replace(/^http/, 'ws'));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let subscription: unknown;
  ws.on('message', (data) => {
    const message = JSON.parse(String(data)) as {
      id?: number;
      result?: unknown;
      params?: { subscription: unknown; result: { number: string; hash: string } };
    };
    if (message.id === 1) subscription = message.result;
    else if (message.params !== undefined && message.params.subscription === subscription)
      heads.push(message.params.result);
  });
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
  await waitFor(() => heads.length > 0, 'the first newHeads notification');
});

after(async () => {
  ws?.close();
  await app?.close();
  await liar?.close();
  await soloLiar?.close();
  await node?.stop();
});

describe('a lying origin in the pool', () => {
  /** 10 rounds of eth_blockNumber, the `latest` block and eth_getBalance at `latest`: each the anvil's. */
  async function clientsSeeTheRealChain(): Promise<void> {
    const gateway: Ask = (method, params) => call(app.rpcUrl(), method, params);
    const anvil: Ask = (method, params) => call(node.url, method, params);
    for (let i = 0; i < 10; i += 1) await assertRealHead(gateway, anvil, PROBE, REAL_BALANCE);
  }

  for (const kind of ['far', 'fork', 'unlinked'] as HeadLieKind[]) {
    it(`claiming a ${kind} head: refused and counted; clients see only the real chain and state`, async () => {
      const before = await refusedCount('liar');
      const told = liar.lies;
      // First with the chain standing still: the liar's last adopted head is the network head, so only
      // its refusal keeps head-relative calls away from it.
      await call(node.url, 'evm_setIntervalMining', [0]);
      const real = Number(await call<string>(node.url, 'eth_blockNumber'));
      await waitFor(
        () => tracked('liar')?.state.head === real && app.chain.networkHead('sepolia') === real,
        'both at the head',
      );
      liar.lie = anyOf(headLie(kind), balanceLie(FAKE_BALANCE));
      await waitFor(
        async () => tracked('liar')?.state.refused === true && (await refusedCount('liar')) > before,
        'the refusal',
      );
      await clientsSeeTheRealChain();
      // Then while the real chain moves on. Not for a fork: a made-up block on the real parent at the
      // node's height links to the chain as well as the real one does, and with the liar's only pool-mate
      // as the other voice, whichever the tracker reads first wins (docs/consistency.md, "What linking
      // cannot tell"); a second pool or a trusted origin decides that race.
      // (Its balance lie stops with it: only the refusal keeps calls away from the liar.)
      if (kind === 'fork') liar.lie = undefined;
      await call(node.url, 'evm_setIntervalMining', [1]);
      await waitFor(() => (app.chain.networkHead('sepolia') ?? 0) >= real + 2, 'two more real blocks');
      await clientsSeeTheRealChain();
      assert.ok(liar.lies > told, 'the liar did lie (to the tracker and the monitor at least)');
      liar.lie = undefined;
      await waitFor(() => tracked('liar')?.state.refused === false, 'the liar, honest again, adopted again');
    });
  }

  it('newHeads subscribers got the real chain, every block once, in order', async () => {
    assert.ok(heads.length >= 5, `${heads.length} heads: ${JSON.stringify(heads)}`);
    for (const [i, head] of heads.entries()) {
      if (i > 0) assert.equal(Number(head.number), Number(heads[i - 1]?.number) + 1, 'heads rise by one');
      const ours = await call<{ hash: string }>(node.url, 'eth_getBlockByNumber', [head.number, false]);
      assert.equal(head.hash, ours.hash, `head ${Number(head.number)} is the anvil's`);
    }
  });

  it('the honest origin stayed Healthy, and no chain incident was raised', async () => {
    assert.equal(tracked('honest')?.usable, true);
    const events = await app.store.db.selectFrom('health_events').selectAll().execute();
    const down = events.filter((e) => e.origin_name === 'honest' && e.new_health === 'Unhealthy');
    assert.deepEqual(
      down.map((e) => e.reason),
      [],
    );
    assert.deepEqual(await app.store.db.selectFrom('chain_incidents').selectAll().execute(), []);
  });

  it('a lone origin (the only one of its network) is still followed', async () => {
    await waitFor(async () => (await call(app.rpcUrl('solo'), 'eth_blockNumber')) === '0xf4240', 'the lone head');
    assert.equal(app.chain.headCeiling('solo'), undefined);
  });
});
