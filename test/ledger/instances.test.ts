/**
 * Two instances on one PostgreSQL in front of one real anvil node (SPEC §19): each transaction is
 * recorded once — also one sent through both — and followed by the instance that recorded it; every
 * state change is one event. When one instance stops, the other takes its records over and follows
 * them to `final`. Runs in the PostgreSQL pass only: on the embedded SQLite store one process owns the
 * database (docs/ledger.md), so a second one takes every record at start by design.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { testBackend, testStoreLocation } from '../helpers/store.js';
import { ALICE, BOB, CHAIN_ID, rpc, sendThroughGateway, signTransfer, waitForStatus } from './helpers.js';

test('two instances on one PostgreSQL record and follow each transaction once, and take over from each other', {
  skip: testBackend() !== 'postgres' && 'needs the PostgreSQL pass (scripts/run-tests.mjs)',
}, async (t) => {
  const node = await startTestAnvil({ noMining: true });
  const location = await testStoreLocation();
  const apps: TestApp[] = [];
  t.after(async () => {
    for (const app of apps) await app.close().catch(() => undefined);
    await node.stop();
    location.cleanup();
  });
  const raw = {
    database_url: location.database_url,
    // Instances sharing a database share its secrets key.
    secrets_key_file: join(location.data_dir, 'secrets.key'),
    networks: { sepolia: { chain_id: CHAIN_ID, pools: ['p'], head_poll_interval: 0.05 } },
    pools: [poolOf('p', [node.url])],
  };
  const first = await startApp(raw);
  apps.push(first);
  const second = await startApp(raw);
  apps.push(second);
  const db = first.store.db;

  const one = await sendThroughGateway(first, await signTransfer(ALICE, 0));
  const two = await sendThroughGateway(second, await signTransfer(BOB, 0));
  const both = await signTransfer(ALICE, 1);
  const three = await sendThroughGateway(first, both);
  await first.ledger.settled();
  // The same bytes again through the other instance once the first recorded them: anvil answers
  // "already imported", which the gateway answers as success for a transaction the origin has (SPEC §17),
  // so the second instance's ledger is told too, and meets the recorded row.
  assert.equal(await sendThroughGateway(second, both), three, 'an idempotent resend');
  await Promise.all([first.ledger.settled(), second.ledger.settled()]);

  const rows = await db.selectFrom('ledger_transactions').select(['hash', 'owner']).execute();
  assert.equal(rows.length, 3, 'each transaction recorded once');
  const owner = new Map(rows.map((row) => [row.hash, row.owner]));
  assert.notEqual(owner.get(one), owner.get(two), 'each instance owns what it recorded');
  assert.equal(owner.get(three), owner.get(one), 'the first to record it owns it');

  await rpc(node.url, 'evm_mine');
  for (const hash of [one, two, three]) await waitForStatus(first, hash, 'included');
  await Promise.all([first.ledger.settled(), second.ledger.settled()]);

  // The first instance stops: the second takes its records (at its next heartbeat, or its sweep below).
  apps.splice(0, 1);
  await first.close();
  await rpc(node.url, 'anvil_mine', ['0x41']);
  for (const hash of [one, two, three]) await waitForStatus(second, hash, 'final', 60_000);
  const owners = await second.store.db.selectFrom('ledger_transactions').select('owner').distinct().execute();
  assert.equal(owners.length, 1, 'one instance follows them all now');

  const events = await second.store.db.selectFrom('ledger_events').select(['hash', 'status']).execute();
  for (const hash of [one, two, three]) {
    assert.deepEqual(
      events
        .filter((event) => event.hash === hash)
        .map((event) => event.status)
        .sort(),
      ['final', 'included', 'pending'],
      `${hash}: one event per change`,
    );
  }
});
