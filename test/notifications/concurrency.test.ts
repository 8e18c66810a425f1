/**
 * Two notification services on one database (as two `serve` processes on one PostgreSQL, each with its
 * own connection pool; on the SQLite pass they share the one connection, since better-sqlite3 blocks the
 * event loop while a second in-process connection waits for the file lock) run their passes at the
 * same time over the same events:
 * every event is dispatched once (cursor compare-and-set) and every delivery is sent once (claims with
 * a lease, FOR UPDATE SKIP LOCKED on PostgreSQL) — no webhook-id reaches the receiver twice.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildConfig } from '../../src/config/load.js';
import { outboundPolicy } from '../../src/config/outbound.js';
import { listHistory } from '../../src/notifications/queries/history.js';
import { listDeliveries } from '../../src/notifications/queries/outbox.js';
import { NotificationService } from '../../src/notifications/service.js';
import { openStore } from '../../src/store/database.js';
import { openTestSecrets, storeOptions, testStoreLocation } from '../helpers/store.js';
import { insertAccount, insertEvent, insertPool, insertWebhookPolicy, startReceiver } from './helpers.js';

const EVENTS = 30;

test('two services never dispatch an event twice nor send a delivery twice', async () => {
  const location = await testStoreLocation();
  const storeA = await openStore(storeOptions(location));
  const storeB = location.backend === 'postgres' ? await openStore(storeOptions(location)) : storeA;
  const receiver = await startReceiver();
  const config = buildConfig({ data_dir: location.data_dir }, '(test)');
  const secretsA = await openTestSecrets(storeA, location.data_dir);
  const secretsB = storeB === storeA ? secretsA : await openTestSecrets(storeB, location.data_dir);
  const a = new NotificationService({ store: storeA, secrets: secretsA, config, outbound: outboundPolicy(config) });
  const b = new NotificationService({ store: storeB, secrets: secretsB, config, outbound: outboundPolicy(config) });
  try {
    const account = await insertAccount(storeA, config.account_id); // trusted: may reach the local receiver
    const pool = await insertPool(storeA, account, { name: 'shared' });
    await insertWebhookPolicy(storeA, secretsA, account, { name: 'shared', url: receiver.url });
    for (let i = 0; i < EVENTS; i++) {
      await insertEvent(storeA, {
        account_id: account,
        pool_id: pool,
        pool_name: 'shared',
        new_health: i % 2 ? 'Healthy' : 'Unhealthy',
      });
    }
    const rounds = await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
    assert.equal(
      rounds.reduce((sum, r) => sum + r.events, 0),
      EVENTS,
      'each event dispatched by exactly one service',
    );
    assert.equal(
      rounds.reduce((sum, r) => sum + r.attempts, 0),
      EVENTS,
      'each delivery attempted by exactly one service',
    );
    const ids = receiver.requests.map((request) => String(request.headers['webhook-id']));
    assert.equal(ids.length, EVENTS);
    assert.equal(new Set(ids).size, EVENTS, 'no webhook-id twice');
    const deliveries = await listDeliveries(storeA.db, account);
    assert.equal(deliveries.length, EVENTS);
    assert.ok(deliveries.every((d) => d.status === 'sent' && d.attempts === 1));
    assert.equal((await listHistory(storeA.db, account, {}, 1000, 0)).length, EVENTS);
  } finally {
    await a.stop();
    await b.stop();
    await storeA.close();
    if (storeB !== storeA) await storeB.close();
    await receiver.close();
    location.cleanup();
  }
});
