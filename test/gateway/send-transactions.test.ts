/**
 * Transactions (SPEC §17): `networks.{name}.send_transactions`, "already known" answered as success,
 * and the 60 s resend memory, through a whole in-process Switchyard on an injected clock, in front of
 * three INDEPENDENT anvil nodes (a transaction exists only where it was sent), each behind a "provider"
 * proxy (test/helpers/provider-proxy.ts) that counts what reaches it. Transactions are signed with viem.
 *   - `all`: every healthy origin of every pool gets the send exactly once (and mines it into one identical
 *     block: the nodes stay on one chain); the first acceptance answers
 *     (before a stalled origin has answered) and is the origin the client's pending reads stick to; the
 *     transaction ledger records it once with every accepting origin; when every origin refuses, the
 *     refusal passes;
 *   - "already known" (geth's wording, from a provider) for a transaction the origin has is success with
 *     the hash (the check that it has it carries the client's request id); for one it does not have, the
 *     answer passes; anvil's own "nonce too low" for a mined
 *     resend is success, for another transaction with that nonce it passes;
 *   - the same raw transaction again within 60 s is answered from memory (the origin's count does not
 *     move); 61 s later it reaches the origin again; a refused send is never remembered.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { parseEther } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { ManualClock } from '../../src/clock.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { type RpcAnswer, rpc } from '../helpers/http.js';
import { headsKnown, type ProviderProxy, startProviderProxy } from '../helpers/provider-proxy.js';

const MNEMONIC = 'test test test test test test test test test test test junk';
const RECIPIENT = '0x000000000000000000000000000000000000bEEF';
const ALREADY_KNOWN = { code: -32000, message: 'already known' };

let nodes: AnvilNode[];
let proxies: ProviderProxy[];
let app: TestApp;
const clock = new ManualClock('2026-06-01T12:00:00Z');

/** A signed transfer from the mnemonic's account `index`. */
function signed(index: number, nonce = 0, value = '0.01'): Promise<`0x${string}`> {
  return mnemonicToAccount(MNEMONIC, { addressIndex: index }).signTransaction({
    chainId: 11_155_111,
    type: 'eip1559',
    to: RECIPIENT,
    value: parseEther(value),
    nonce,
    gas: 21_000n,
    maxFeePerGas: 20_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  });
}

const sends = (proxy: ProviderProxy) => proxy.calls('eth_sendRawTransaction');
const send = (network: string, raw: string) => rpc(app.rpcUrl(network), 'eth_sendRawTransaction', [raw]);

/** Whether the node has the transaction (mined or pending). */
async function has(node: AnvilNode, hash: unknown): Promise<boolean> {
  return (await rpc(node.url, 'eth_getTransactionByHash', [hash])).answer.result !== null;
}

before(async () => {
  nodes = await Promise.all([startTestAnvil(), startTestAnvil(), startTestAnvil()]);
  proxies = await Promise.all(nodes.map((node, i) => startProviderProxy(node.url, {}, i + 1)));
  const [a, b, c] = proxies as [ProviderProxy, ProviderProxy, ProviderProxy];
  app = await startApp(
    {
      networks: {
        allnet: { chain_id: 11_155_111, pools: ['left', 'right'], send_transactions: 'all' },
        solo: { chain_id: 11_155_111, pools: ['only-a'] },
      },
      pools: [
        {
          name: 'left',
          origins: [
            { name: 'a', address: a.url },
            { name: 'b', address: b.url },
          ],
        },
        { name: 'right', origins: [{ name: 'c', address: c.url }] },
        { name: 'only-a', origins: [{ name: 'a', address: a.url }] },
      ],
    },
    { clock },
  );
  await headsKnown(app.chain, 'allnet');
  await headsKnown(app.chain, 'solo');
});

after(async () => {
  await app?.close();
  await Promise.all((proxies ?? []).map((proxy) => proxy.close()));
  await Promise.all((nodes ?? []).map((node) => node.stop()));
});

beforeEach(() => {
  for (const proxy of proxies) proxy.behaviour = {};
});

describe('send_transactions: all', () => {
  it('every healthy origin of every pool gets the send once; the first acceptance answers and keeps the client', async () => {
    const [a, b, c] = proxies as [ProviderProxy, ProviderProxy, ProviderProxy];
    // a and c hold every call 3 s: the answer must not wait for them, and b accepts first.
    const stalled = { stall: { fraction: 1, ms: 3_000 } };
    a.behaviour = stalled;
    c.behaviour = stalled;
    const before = proxies.map(sends);
    await sameNextBlock();
    const raw = await signed(1);
    const sent = await send('allnet', raw);
    assert.match(String(sent.answer.result), /^0x[0-9a-f]{64}$/, JSON.stringify(sent.answer));
    const stalledSends = [a, c].flatMap((proxy) =>
      proxy.requests.filter((r) => r.methods[0] === 'eth_sendRawTransaction' && r.outcome === 'stalled'),
    );
    assert.equal(stalledSends.length, 2);
    assert.ok(
      stalledSends.every((r) => !r.answered),
      'answered before the stalled origins',
    );
    // Each origin got it exactly once, and has it.
    const deadline = Date.now() + 10_000;
    while (proxies.some((proxy, i) => sends(proxy) !== (before[i] as number) + 1) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.deepEqual(
      proxies.map(sends),
      before.map((n) => n + 1),
    );
    a.behaviour = {};
    c.behaviour = {};
    for (const node of nodes) {
      await waitFor(() => has(node, sent.answer.result), 'every node has the transaction');
    }
    // The transaction ledger (SPEC §19) records the send once, with every origin that accepted it.
    const accepting = async (): Promise<string[]> => {
      await app.ledger.settled();
      const rows = await app.store.db.selectFrom('ledger_transactions').select(['hash', 'origins']).execute();
      const row = rows.find((r) => r.hash === sent.answer.result);
      return row === undefined ? [] : (JSON.parse(row.origins) as string[]).sort();
    };
    await waitFor(async () => (await accepting()).length === 3, 'the ledger has the three accepting origins');
    assert.deepEqual(await accepting(), ['left/a', 'left/b', 'right/c']);
    // The client's pending reads go to the origin that accepted first, b (else the router spreads them
    // over a and b, the first pool's origins, once the tracker sees both at the head).
    await trackerSeesEveryHead('allnet');
    const reads = b.calls('eth_getTransactionCount');
    const account = mnemonicToAccount(MNEMONIC, { addressIndex: 1 }).address;
    for (let i = 0; i < 8; i += 1) {
      const nonce = await rpc(app.rpcUrl('allnet'), 'eth_getTransactionCount', [account, 'pending']);
      assert.equal(nonce.answer.result, '0x1');
    }
    assert.equal(b.calls('eth_getTransactionCount'), reads + 8, 'read-your-writes: the first acceptance');
  });

  it('every origin refusing: the refusal passes, each origin asked once', async () => {
    const before = proxies.map(sends);
    // Account 90 of the mnemonic has no funds on these nodes.
    const sent = await send('allnet', await signed(90));
    assert.match(sent.answer.error?.message ?? '', /insufficient funds/i, JSON.stringify(sent.answer));
    assert.deepEqual(
      proxies.map(sends),
      before.map((n) => n + 1),
    );
  });
});

describe('already known', () => {
  it('"already known" from an origin that has the transaction is success with its hash; otherwise it passes', async () => {
    const [a] = proxies as [ProviderProxy];
    const node = nodes[0] as AnvilNode;
    const raw = await signed(2);
    const direct = await rpc(node.url, 'eth_sendRawTransaction', [raw]);
    await waitFor(() => has(node, direct.answer.result), 'the node took the transaction');
    a.behaviour = { refuse: { match: (m) => m === 'eth_sendRawTransaction', ...ALREADY_KNOWN } };
    const sent = await send('solo', raw);
    assert.deepEqual(sent.answer.result, direct.answer.result, JSON.stringify(sent.answer));
    // Asking the origin whether it holds the transaction is part of the client's request: same request id.
    const check = a.requests.filter((r) => r.methods[0] === 'eth_getTransactionByHash').at(-1);
    assert.ok(sent.headers['x-request-id'] !== undefined);
    assert.equal(check?.requestId, sent.headers['x-request-id'], 'the check carries the request id');
    // A transaction the origin does not have: its answer passes.
    const unknown = await send('solo', await signed(3));
    assert.deepEqual(unknown.answer.error, ALREADY_KNOWN);
  });

  it("anvil's own 'nonce too low' for a mined resend is success; for another transaction with that nonce it passes", async () => {
    const node = nodes[0] as AnvilNode;
    const raw = await signed(4);
    const direct = await rpc(node.url, 'eth_sendRawTransaction', [raw]);
    await waitFor(() => has(node, direct.answer.result), 'the node mined the transaction');
    const raw2 = await signed(4, 0, '0.02');
    const straight = await rpc(node.url, 'eth_sendRawTransaction', [raw2]);
    assert.match(straight.answer.error?.message ?? '', /nonce too low/i, 'what anvil answers a used nonce');
    const resent = await send('solo', raw);
    assert.deepEqual(resent.answer.result, direct.answer.result, JSON.stringify(resent.answer));
    const other = await send('solo', raw2);
    assert.match(other.answer.error?.message ?? '', /nonce too low/i);
  });
});

describe('the resend memory', () => {
  it('the same raw transaction within 60 s is answered from memory; after 60 s it reaches the origin again', async () => {
    const [a] = proxies as [ProviderProxy];
    const raw = await signed(5);
    const first = await send('solo', raw);
    assert.match(String(first.answer.result), /^0x[0-9a-f]{64}$/, JSON.stringify(first.answer));
    const count = sends(a);
    clock.advance(59_000);
    const again = await send('solo', raw);
    assert.deepEqual(again.answer, first.answer);
    assert.equal(sends(a), count, 'answered from memory: the origin saw nothing');
    clock.advance(2_000);
    const later = await send('solo', raw);
    assert.equal(sends(a), count + 1, 'forgotten after 60 s: the origin is asked');
    assert.deepEqual(later.answer.result, first.answer.result, 'and its "nonce too low" for it is success');
  });

  it('a refused send is not remembered', async () => {
    const [a] = proxies as [ProviderProxy];
    const raw = await signed(91);
    const count = sends(a);
    const first = await send('solo', raw);
    assert.ok(first.answer.error !== undefined);
    const again = await send('solo', raw);
    assert.deepEqual(again.answer.error, first.answer.error);
    assert.equal(sends(a), count + 2);
  });
});

/**
 * Every node stamps its next block with one timestamp, so a transaction sent to all of them is mined into
 * the very same block everywhere (same parent, contents and time), as on the nodes of one network.
 * Otherwise the stalled nodes would mine it seconds later into blocks of their own: a fork, with the
 * tracker following one side and refusing the other.
 */
async function sameNextBlock(): Promise<void> {
  const latest = await Promise.all(
    nodes.map(async (node) => {
      const block = await rpc(node.url, 'eth_getBlockByNumber', ['latest', false]);
      return Number((block.answer.result as { timestamp: string }).timestamp);
    }),
  );
  const next = Math.max(...latest) + 1;
  for (const node of nodes) {
    const set = await rpc(node.url, 'evm_setNextBlockTimestamp', [next]);
    assert.equal(set.answer.error, undefined, JSON.stringify(set.answer));
  }
}

/** Waits (bounded) until the tracker has every origin of `network` at the one head all the nodes are at. */
async function trackerSeesEveryHead(network: string): Promise<void> {
  const heads = await Promise.all(
    nodes.map(async (node) => Number((await rpc(node.url, 'eth_blockNumber')).answer.result)),
  );
  assert.ok(
    heads.every((head) => head === heads[0]),
    `the nodes are at one head: ${heads.join(', ')}`,
  );
  const caught = () =>
    app.chain.networkHead(network) === heads[0] &&
    app.chain.trackedOrigins(network).every((o) => o.state.head === heads[0]);
  await waitFor(async () => caught(), `the tracker sees every origin of ${network} at block ${heads[0]}`);
}

async function waitFor(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export type { RpcAnswer };
