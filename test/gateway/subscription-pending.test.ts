/**
 * newPendingTransactions from the subscription hub against a real anvil that does not mine (transactions
 * stay pending), behind a whole in-process Switchyard:
 *   - with origin feeds and an origin `ws_address`: the hub relays the origin's own subscription;
 *   - without: eth_newPendingTransactionFilter + eth_getFilterChanges polling through the gateway.
 * Each sent transaction's hash arrives exactly once, to every sink.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../src/clock.js';
import type { Forwarder } from '../../src/gateway/rpc/forwarder.js';
import { SubscriptionHub, type SubscriptionSink } from '../../src/gateway/subscriptions/hub.js';
import { WsOriginFeeds } from '../../src/gateway/upstream/ws-heads.js';
import { silentLogger } from '../../src/log.js';
import { OutboundPolicy, WS_SCHEMES } from '../../src/outbound/policy.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { post, rpc } from '../helpers/http.js';

const ACCOUNT = '5317c4a1d00d5317c4a1d00d5317c4a1';

async function waitFor(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

class Collector implements SubscriptionSink {
  readonly hashes: string[] = [];
  send(notification: string): void {
    this.hashes.push((JSON.parse(notification) as { params: { result: string } }).params.result);
  }
}

/** Methods the hubs sent upstream, in order. */
const asked: string[] = [];

function gatewayForwarder(url: string): Forwarder {
  return {
    async forward(request) {
      asked.push(request.call.method);
      const res = await post(url, request.call.raw);
      return { body: Buffer.from(res.text), id: undefined, pool: 'p', origin: 'o' };
    },
  };
}

let node: AnvilNode;
let app: TestApp;
let from: string;

before(async () => {
  node = await startTestAnvil({ noMining: true });
  app = await startApp({
    account_id: ACCOUNT,
    networks: { sepolia: { chain_id: 11155111, pools: ['p'], head_poll_interval: '100ms' } },
    pools: [
      { name: 'p', origins: [{ name: 'o0', address: node.url, ws_address: node.url.replace('http://', 'ws://') }] },
    ],
  });
  from = ((await rpc(node.url, 'eth_accounts')).answer.result as string[])[0] as string;
  await waitFor(() => app.chain.trackedOrigins('sepolia')[0]?.usable === true, 'a usable origin');
});
after(async () => {
  await app?.close();
  await node?.stop();
});

let nonce = 0;
async function sendPending(): Promise<string> {
  const tx = await rpc(node.url, 'eth_sendTransaction', [
    { from, to: from, value: '0x1', nonce: `0x${(nonce++).toString(16)}` },
  ]);
  assert.equal(tx.answer.error, undefined, JSON.stringify(tx.answer.error));
  return tx.answer.result as string;
}

function hubOf(feeds: boolean): SubscriptionHub {
  const policy = new OutboundPolicy({ trustedAccounts: [ACCOUNT] });
  return new SubscriptionHub({
    chain: app.chain,
    forwarder: gatewayForwarder(app.rpcUrl()),
    networks: app.config.networks,
    clock: systemClock,
    logger: silentLogger,
    tuning: { pendingPollMs: 50 },
    ...(feeds
      ? {
          originFeeds: new WsOriginFeeds({
            guard: policy.connectGuard(policy.rulesFor(ACCOUNT, { schemes: WS_SCHEMES })),
            logger: silentLogger,
            timeoutMs: 5000,
          }),
        }
      : {}),
  });
}

describe('newPendingTransactions on a real anvil', () => {
  for (const feeds of [true, false]) {
    it(feeds ? "relays the origin's ws_address subscription" : 'polls a pending transaction filter', async () => {
      asked.length = 0;
      const hub = hubOf(feeds);
      try {
        const one = new Collector();
        const two = new Collector();
        hub.subscribe('sepolia', ['newPendingTransactions'], one);
        hub.subscribe('sepolia', ['newPendingTransactions'], two);
        // The source is up once a probe transaction shows (the push or the filter needs a moment): a
        // probe sent before it was up is missed, as with any filter, so probes repeat until one shows.
        const deadline = Date.now() + 10_000;
        for (;;) {
          const probe = await sendPending();
          const until = Date.now() + 500;
          while (!one.hashes.includes(probe) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
          if (one.hashes.includes(probe)) break;
          if (Date.now() > deadline) throw new Error('no probe transaction arrived');
        }
        const sent = [await sendPending(), await sendPending()];
        await waitFor(
          () => sent.every((hash) => one.hashes.includes(hash) && two.hashes.includes(hash)),
          'both hashes',
        );
        await new Promise((resolve) => setTimeout(resolve, 200)); // duplicates would come within a poll or two
        for (const hash of sent) assert.equal(one.hashes.filter((h) => h === hash).length, 1, `${hash} once`);
        assert.ok(asked.includes('eth_newPendingTransactionFilter'), 'polling until a push is live');
        // With a push, the live subscription ended polling (its filter uninstalled); without, polls go on.
        assert.equal(asked.includes('eth_uninstallFilter'), feeds);
        if (!feeds) assert.ok(asked.includes('eth_getFilterChanges'));
      } finally {
        hub.close();
      }
    });
  }
});
