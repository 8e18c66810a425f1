/**
 * Transaction alerts end to end (SPEC §19): a `switchyard_transaction_alert` policy on `[dropped,
 * replaced]` with a webhook to a real receiver on port 0, an app in front of a real anvil node, and a
 * restart of the app on the same store in the middle. On both store backends.
 * 1. A is sent through the gateway and replaced by A' straight at the node; B (another sender) is
 *    included in the same block. The receiver answers 503: the `replaced` alert is tried and fails.
 * 2. D is sent through the gateway and stays pending. The app stops and starts again; the receiver
 *    answers 200 now: the `replaced` alert arrives with the webhook-id it had, once.
 * 3. The node forgets D; after `dropped_after` (the clock is moved) the restarted app — which took D over
 *    — drops it: the `dropped` alert arrives, once.
 * At the end: exactly two transaction alerts were delivered (2xx), replaced and dropped, each once; no
 * `included` alert (the policy does not ask for it), and each change is one event in the store.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createToken } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/clock.js';
import { startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { testStoreLocation } from '../helpers/store.js';
import { type ReceivedRequest, startReceiver, waitFor } from '../notifications/helpers.js';
import { ALICE, BOB, CHAIN_ID, rpc, ShiftClock, sendThroughGateway, signTransfer, waitForStatus } from './helpers.js';

interface AlertBody {
  alert_type: string;
  alert_event: string;
  alert_correlation_id: string;
  data: Record<string, unknown>;
}

const DATA_FIELDS = [
  'block_hash',
  'block_number',
  'from',
  'hash',
  'key_id',
  'network',
  'nonce',
  'previous_status',
  'replaced_by',
  'status',
].sort();

test('a policy on dropped and replaced gets exactly those alerts by webhook, each once, across a restart', async (t) => {
  const node = await startTestAnvil({ noMining: true });
  const receiver = await startReceiver();
  const location = await testStoreLocation();
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-ledger-alerts-'));
  const clock = new ShiftClock();
  let app: TestApp | undefined;
  t.after(async () => {
    await app?.close();
    await receiver.close();
    await node.stop();
    rmSync(dataDir, { recursive: true, force: true });
    location.cleanup();
  });
  const raw = {
    data_dir: dataDir,
    ...(location.database_url === undefined ? {} : { database_url: location.database_url }),
    networks: {
      sepolia: { chain_id: CHAIN_ID, pools: ['p'], head_poll_interval: 0.05, ledger: { dropped_after: 60 } },
    },
    pools: [poolOf('p', [node.url])],
  };
  app = await startApp(raw, { clock });
  const account = app.config.account_id;
  const { token } = await createToken(app.store.db, systemClock, { accountId: account, readOnly: false });
  const api = async (path: string, body: unknown): Promise<{ id: string }> => {
    const res = await fetch(`${(app as TestApp).apiUrl}/accounts/${account}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const envelope = (await res.json()) as { success: boolean; result: { id: string } };
    assert.equal(envelope.success, true, JSON.stringify(envelope));
    return envelope.result;
  };
  const destination = await api('/alerting/v3/destinations/webhooks', { name: 'receiver', url: receiver.url });
  await api('/alerting/v3/policies', {
    name: 'transactions in trouble',
    alert_type: 'switchyard_transaction_alert',
    enabled: true,
    mechanisms: { webhooks: [{ id: destination.id }] },
    filters: { status: ['dropped', 'replaced'], network: ['sepolia'] },
  });
  const alerts = (from = 0): Array<ReceivedRequest & { body: string }> =>
    receiver.requests.slice(from).filter((request) => request.body.includes('"switchyard_transaction_alert"'));
  const parsed = (request: ReceivedRequest) => JSON.parse(request.body) as AlertBody;

  // ── 1. Replaced while the receiver fails.
  receiver.status = 503;
  const a = await sendThroughGateway(app, await signTransfer(ALICE, 0, { gwei: 10n }));
  const b = await sendThroughGateway(app, await signTransfer(BOB, 0));
  await app.ledger.settled();
  const replacement = await rpc<string>(node.url, 'eth_sendRawTransaction', [
    await signTransfer(ALICE, 0, { gwei: 30n, value: 2n }),
  ]);
  await rpc(node.url, 'evm_mine');
  await waitForStatus(app, a, 'replaced');
  await waitForStatus(app, b, 'included');
  const failed = await waitFor(() => alerts()[0], 'the replaced alert tried once (503)');
  assert.equal(parsed(failed).data.status, 'replaced');
  const replacedId = failed.headers['webhook-id'];

  // ── 2. D pending; restart; the receiver takes alerts again.
  const d = await sendThroughGateway(app, await signTransfer(ALICE, 1));
  await app.ledger.settled();
  await app.close();
  app = undefined;
  receiver.status = 200;
  const afterRestart = receiver.requests.length;
  app = await startApp(raw, { clock });
  // The failed attempt's back-off (4 s ± 20 %) passes at once on the moved clock.
  clock.advance(10_000);
  const redelivered = await waitFor(
    () => alerts(afterRestart)[0],
    'the replaced alert delivered after the restart',
    30_000,
  );
  assert.equal(redelivered.headers['webhook-id'], replacedId, 'the same delivery, not a new alert');

  // ── 3. The restarted app follows D and drops it.
  await rpc(node.url, 'anvil_dropTransaction', [d]);
  clock.advance(16_000);
  app.ledger.sweep();
  await app.ledger.settled();
  clock.advance(61_000);
  await waitForStatus(app, d, 'dropped');
  await waitFor(() => alerts(afterRestart).length >= 2 && alerts(afterRestart), 'the dropped alert', 30_000);
  // Nothing more is on its way: a moment for a stray duplicate to show.
  await new Promise((resolve) => setTimeout(resolve, 1_500));

  const delivered = alerts(afterRestart);
  assert.equal(delivered.length, 2, delivered.map((request) => request.body).join('\n'));
  const bodies = delivered.map(parsed);
  assert.deepEqual(
    bodies.map((body) => body.data.status),
    ['replaced', 'dropped'],
  );
  assert.equal(new Set(delivered.map((request) => request.headers['webhook-id'])).size, 2);
  for (const body of bodies) {
    assert.equal(body.alert_event, 'ALERT_STATE_EVENT_START');
    assert.deepEqual(Object.keys(body.data).sort(), DATA_FIELDS);
  }
  assert.deepEqual(bodies[0]?.data, {
    network: 'sepolia',
    hash: a,
    from: ALICE.address.toLowerCase(),
    nonce: 0,
    status: 'replaced',
    previous_status: 'pending',
    block_number: null,
    block_hash: null,
    replaced_by: replacement,
    key_id: null,
  });
  assert.equal(bodies[1]?.data.hash, d);
  assert.equal(bodies[1]?.data.previous_status, 'pending');
  // Every alert that was ever sent is one of the two (the 503 attempt included): never `included`.
  assert.deepEqual(new Set(alerts().map((request) => parsed(request).data.status)), new Set(['replaced', 'dropped']));
  // One event per change (the order within one block is the block's).
  const events = await app.store.db.selectFrom('ledger_events').select(['hash', 'status']).execute();
  assert.deepEqual(
    events.map((event) => `${event.hash} ${event.status}`).sort(),
    [
      [a, 'pending'],
      [a, 'replaced'],
      [b, 'pending'],
      [b, 'included'],
      [d, 'pending'],
      [d, 'dropped'],
    ]
      .map(([hash, status]) => `${hash} ${status}`)
      .sort(),
  );
});
