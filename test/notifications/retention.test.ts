/**
 * Bounded retention (`notification_retention`): sent deliveries, their history and dispatched health
 * events older than the retention are pruned; an undelivered (pending) alert is never pruned, whatever its
 * age; an event the dispatcher has not reached yet is never pruned. A ManualClock drives the ages.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { buildConfig } from '../../src/config/load.js';
import { outboundPolicy } from '../../src/config/outbound.js';
import { readHealthEvents } from '../../src/health/events.js';
import { listHistory } from '../../src/notifications/queries/history.js';
import { listDeliveries } from '../../src/notifications/queries/outbox.js';
import { pruneNotificationData } from '../../src/notifications/queries/retention.js';
import { NotificationService } from '../../src/notifications/service.js';
import { openTestStore } from '../helpers/store.js';
import { insertAccount, insertEvent, insertPool, insertWebhookPolicy, startReceiver } from './helpers.js';

const DAY = 86_400_000;

test('old sent alerts, history and dispatched events are pruned; pending alerts and undispatched events never', async () => {
  const opened = await openTestStore();
  const receiver = await startReceiver();
  const clock = new ManualClock('2026-03-01T00:00:00Z');
  const config = buildConfig({ data_dir: opened.location.data_dir, notification_retention: '2d' }, '(test)');
  const service = new NotificationService({
    store: opened.store,
    secrets: opened.secrets,
    config,
    outbound: outboundPolicy(config),
    clock,
    random: () => 0.5,
  });
  const { store } = opened;
  try {
    const account = await insertAccount(store, config.account_id); // trusted: may reach the local receiver
    const pool = await insertPool(store, account, { name: 'kept' });
    const at = () => new Date(clock.now()).toISOString();
    await insertWebhookPolicy(store, opened.secrets, account, { name: 'all', url: receiver.url, at: at() });
    const event = (new_health: 'Healthy' | 'Unhealthy') =>
      insertEvent(store, { account_id: account, pool_id: pool, pool_name: 'kept', new_health, occurred_at: at() });

    const sentEvent = await event('Unhealthy');
    await service.runOnce();
    assert.equal((await listHistory(store.db, account, {}, 100, 0)).length, 1);

    // A day and a half later, an alert the receiver refuses: it stays pending, retried.
    clock.advance(1.5 * DAY);
    receiver.status = 500;
    const pendingEvent = await event('Healthy');
    await service.runOnce();

    // Past the retention of the first alert, within the 24 h retry window of the second.
    clock.advance(0.5 * DAY + 60_000);
    await service.runOnce();
    const deliveries = await listDeliveries(store.db, account);
    assert.deepEqual(
      deliveries.map((d) => [d.event_id, d.status]),
      [[pendingEvent, 'pending']],
      'the sent delivery is gone, the pending one is kept',
    );
    assert.deepEqual(await listHistory(store.db, account, {}, 100, 0), [], 'its history entry is gone');
    const events = (await readHealthEvents(store.db, { afterSeq: 0 })).map((e) => e.id);
    assert.deepEqual(events, [pendingEvent], 'the dispatched old event is gone');
    assert.ok(!events.includes(sentEvent));

    // Far past every cutoff: a pending delivery is still never deleted.
    const pendingId = deliveries[0]?.id;
    await pruneNotificationData(store.db, new Date(clock.now() + 365 * DAY).toISOString());
    const still = await listDeliveries(store.db, account);
    assert.ok(still.some((d) => d.id === pendingId && d.status === 'pending'));

    // An old event the dispatcher has not reached yet is never pruned.
    const undispatched = await insertEvent(store, {
      account_id: account,
      pool_id: pool,
      pool_name: 'kept',
      new_health: 'Unhealthy',
      occurred_at: '2020-01-01T00:00:00.000Z',
    });
    await pruneNotificationData(store.db, at());
    assert.ok((await readHealthEvents(store.db, { afterSeq: 0 })).some((e) => e.id === undispatched));
  } finally {
    await service.stop();
    await receiver.close();
    await opened.close();
  }
});

test('notification_retention is at least a day, or 0 to keep everything', () => {
  assert.equal(buildConfig({}, '(test)').notification_retention, 30 * DAY);
  assert.equal(buildConfig({ notification_retention: 0 }, '(test)').notification_retention, 0);
  assert.throws(() => buildConfig({ notification_retention: '1h' }, '(test)'), /notification_retention.*at least 1d/s);
});
