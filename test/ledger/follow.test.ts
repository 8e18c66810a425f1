/**
 * The ledger follows each send (SPEC §19) against a real anvil node that mines only when told:
 * pending → included (block number, hash, index) → final; replaced by a transaction of the same sender
 * and nonce sent straight to the node; dropped after `dropped_after` once the node forgot it
 * (anvil_dropTransaction; the clock is moved, not waited for), and first sent again with
 * `rebroadcast: true`; reorged out (anvil_reorg) back to pending, then included again; and sends over
 * WebSocket and in a batch are recorded like any other, with the key and the client's address.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { systemClock } from '../../src/clock.js';
import { createGatewayKey } from '../../src/keys/key-queries.js';
import { WsRpcClient } from '../helpers/ws-client.js';
import { waitFor } from '../notifications/helpers.js';
import {
  ALICE,
  record,
  rpc,
  ShiftClock,
  sendThroughGateway,
  signTransfer,
  startScene,
  waitForStatus,
} from './helpers.js';

interface Tx {
  blockNumber: string | null;
  blockHash: string | null;
}

test('a send through the gateway is pending, then included with its block, then final', async (t) => {
  const scene = await startScene();
  t.after(() => scene.close());
  const { app, node } = scene;
  const raw = await signTransfer(ALICE, 0);
  const hash = await sendThroughGateway(app, raw);
  await app.ledger.settled();
  const pending = await record(app, hash);
  assert.equal(pending?.status, 'pending');
  assert.equal(pending?.from, ALICE.address.toLowerCase());
  assert.equal(pending?.nonce, 0);
  assert.equal(pending?.key_id, null);
  assert.equal(pending?.block_number, null);
  assert.deepEqual(
    pending?.history.map((entry) => entry.status),
    ['pending'],
  );

  await rpc(node.url, 'evm_mine');
  const mined = await rpc<Tx>(node.url, 'eth_getTransactionByHash', [hash]);
  const included = await waitForStatus(app, hash, 'included');
  assert.equal(included.block_number, Number(mined.blockNumber));
  assert.equal(included.block_hash, mined.blockHash);
  assert.equal(included.transaction_index, 0);

  // anvil's finalized block is 64 below its head: 65 more blocks finalize the one it is in.
  await rpc(node.url, 'anvil_mine', ['0x41']);
  const final = await waitForStatus(app, hash, 'final', 40_000);
  assert.equal(final.block_hash, mined.blockHash);
  assert.deepEqual(
    final.history.map((entry) => [entry.status, entry.block_number]),
    [
      ['pending', undefined],
      ['included', Number(mined.blockNumber)],
      ['final', Number(mined.blockNumber)],
    ],
  );
});

test('a transaction of the same sender and nonce mined in its place makes it replaced, naming the other', async (t) => {
  const scene = await startScene();
  t.after(() => scene.close());
  const { app, node } = scene;
  const hash = await sendThroughGateway(app, await signTransfer(ALICE, 0, { gwei: 10n }));
  await app.ledger.settled();
  const replacement = await rpc<string>(node.url, 'eth_sendRawTransaction', [
    await signTransfer(ALICE, 0, { gwei: 30n, value: 2n }),
  ]);
  await rpc(node.url, 'evm_mine');
  const replaced = await waitForStatus(app, hash, 'replaced');
  assert.equal(replaced.replaced_by, replacement);
  assert.equal(replaced.block_number, null);
  assert.deepEqual(
    replaced.history.map((entry) => entry.status),
    ['pending', 'replaced'],
  );
  // A send the origin refuses (its nonce is used now) is answered with the origin's error: not recorded.
  const refused = await fetch(app.rpcUrl(), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_sendRawTransaction',
      params: [await signTransfer(ALICE, 0, { value: 3n })],
    }),
  });
  assert.ok(((await refused.json()) as { error?: unknown }).error !== undefined);
  await app.ledger.settled();
  assert.equal((await app.store.db.selectFrom('ledger_transactions').select('hash').execute()).length, 1);
});

test('a transaction no origin holds for dropped_after is dropped, not before', async (t) => {
  const clock = new ShiftClock();
  const scene = await startScene({ ledger: { dropped_after: 60 } }, {}, { clock });
  t.after(() => scene.close());
  const { app, node } = scene;
  const hash = await sendThroughGateway(app, await signTransfer(ALICE, 0));
  await app.ledger.settled();
  await rpc(node.url, 'anvil_dropTransaction', [hash]);
  // The first check (every dropped_after / 4) finds it nowhere: from then on it is absent.
  clock.advance(16_000);
  app.ledger.sweep();
  await app.ledger.settled();
  clock.advance(45_000);
  app.ledger.sweep();
  await app.ledger.settled();
  assert.equal((await record(app, hash))?.status, 'pending', 'absent for 45 s of 60: still pending');
  clock.advance(16_000);
  const dropped = await waitForStatus(app, hash, 'dropped');
  assert.deepEqual(
    dropped.history.map((entry) => entry.status),
    ['pending', 'dropped'],
  );
});

test('with rebroadcast, a would-be-dropped transaction is sent again first, up to max_rebroadcasts', async (t) => {
  const clock = new ShiftClock();
  const scene = await startScene(
    { ledger: { dropped_after: 60, rebroadcast: true, max_rebroadcasts: 1 } },
    {},
    { clock },
  );
  t.after(() => scene.close());
  const { app, node } = scene;
  const hash = await sendThroughGateway(app, await signTransfer(ALICE, 0));
  await app.ledger.settled();
  const forget = async () => {
    await rpc(node.url, 'anvil_dropTransaction', [hash]);
    assert.equal(await rpc(node.url, 'eth_getTransactionByHash', [hash]), null);
    clock.advance(16_000);
    app.ledger.sweep();
    await app.ledger.settled();
    clock.advance(61_000);
    app.ledger.sweep();
    await app.ledger.settled();
  };
  await forget();
  // Sent again to the origin, which holds it once more; the record stays pending.
  const again = await rpc<Tx | null>(node.url, 'eth_getTransactionByHash', [hash]);
  assert.notEqual(again, null, 'the origin has the transaction again');
  assert.equal((await record(app, hash))?.status, 'pending');
  // The one rebroadcast allowed is spent: the next time it is dropped.
  await forget();
  const dropped = await waitForStatus(app, hash, 'dropped');
  assert.deepEqual(
    dropped.history.map((entry) => entry.status),
    ['pending', 'dropped'],
  );
});

test('a reorg takes an included transaction back to pending at once, and a new block includes it again', async (t) => {
  const scene = await startScene();
  t.after(() => scene.close());
  const { app, node } = scene;
  const raw = await signTransfer(ALICE, 0);
  const hash = await sendThroughGateway(app, raw);
  await rpc(node.url, 'evm_mine');
  const first = await waitForStatus(app, hash, 'included');
  // Block 1 replaced by an empty one: the transaction is in no block and no mempool.
  await rpc(node.url, 'anvil_reorg', [1, []]);
  const back = await waitForStatus(app, hash, 'pending');
  assert.equal(back.block_number, null);
  assert.deepEqual(
    back.history.map((entry) => [entry.status, entry.block_hash]),
    [
      ['pending', undefined],
      ['included', first.block_hash],
      ['reorged', first.block_hash],
    ],
  );
  // Block 1 replaced again, now with the transaction in it.
  await rpc(node.url, 'anvil_reorg', [1, [[raw, 0]]]);
  const mined = await rpc<Tx>(node.url, 'eth_getTransactionByHash', [hash]);
  const again = await waitForStatus(app, hash, 'included');
  assert.equal(again.block_hash, mined.blockHash);
  assert.notEqual(again.block_hash, first.block_hash);
  assert.deepEqual(
    again.history.map((entry) => entry.status),
    ['pending', 'included', 'reorged', 'included'],
  );
});

test('sends over WebSocket and inside a batch are recorded too, with the gateway key and the client address', async (t) => {
  const scene = await startScene();
  t.after(() => scene.close());
  const { app } = scene;
  const key = await createGatewayKey(app.store.db, systemClock, app.config.account_id, {
    name: 'dapp',
    enabled: true,
    networks: null,
    rate_limit: null,
    daily_quota: null,
  });
  await app.ledger.settled();
  // The gateway's key table polls the store every 250 ms: wait until it knows the key.
  const ws = await waitFor(async () => {
    const client = await WsRpcClient.open(`${app.rpcUrl().replace(/^http/, 'ws')}?key=${key.value}`).catch(
      () => undefined,
    );
    return client;
  }, 'the key accepted on a WebSocket handshake');
  t.after(() => ws.close());
  const overWs = await ws.result<string>('eth_sendRawTransaction', [await signTransfer(ALICE, 0)]);
  const batch = await fetch(app.rpcUrl(), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', id: 2, method: 'eth_sendRawTransaction', params: [await signTransfer(ALICE, 1)] },
    ]),
  });
  const inBatch = ((await batch.json()) as Array<{ id: number; result: string }>).find((a) => a.id === 2)?.result;
  await app.ledger.settled();
  const ledgerRows = await app.store.db
    .selectFrom('ledger_transactions')
    .select(['hash', 'key_id', 'client'])
    .orderBy('nonce')
    .execute();
  assert.deepEqual(ledgerRows, [
    { hash: overWs, key_id: key.id, client: '127.0.0.1' },
    { hash: inBatch, key_id: null, client: '127.0.0.1' },
  ]);
});
