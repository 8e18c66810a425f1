/**
 * Events whose `seq` commits after a higher one (possible on PostgreSQL with concurrent writers) are not
 * lost: the dispatcher passes the gap (at once on SQLite, where such gaps cannot come from in-flight
 * transactions; after 10 s on PostgreSQL) and keeps re-checking the skipped seqs, so the late event is
 * still dispatched — exactly once.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { buildConfig } from '../../src/config/load.js';
import { NotificationService } from '../../src/notifications/service.js';
import { openTestStore } from '../helpers/store.js';
import { insertAccount, insertPool, insertWebhookPolicy, startReceiver } from './helpers.js';

test('an event committed late with a lower seq is still dispatched once', async (t) => {
  const opened = await openTestStore();
  if (opened.store.dialect !== 'sqlite') {
    await opened.close();
    t.skip('the gap wait on PostgreSQL is 10 s; the late path is the same code');
    return;
  }
  const receiver = await startReceiver();
  const clock = new ManualClock('2026-03-01T00:00:00Z');
  const config = buildConfig({ data_dir: opened.location.data_dir }, '(test)');
  const service = new NotificationService({ store: opened.store, secrets: opened.secrets, config, clock });
  try {
    const { store } = opened;
    const account = await insertAccount(store, config.account_id); // trusted: may reach the local receiver
    const pool = await insertPool(store, account, { name: 'late' });
    await insertWebhookPolicy(store, opened.secrets, account, { name: 'late', url: receiver.url, at: '' });
    const event = (seq: number, reason: string) =>
      store.db
        .insertInto('health_events')
        .values({
          seq,
          id: randomUUID(),
          account_id: account,
          event_source: 'pool',
          pool_id: pool,
          pool_name: 'late',
          origin_name: null,
          origin_address: null,
          previous: 'Healthy',
          new_health: 'Unhealthy',
          reason,
          occurred_at: new Date(clock.now()).toISOString(),
        })
        .execute();
    await event(1, 'first');
    await event(3, 'third');
    assert.equal((await service.runOnce()).events, 2);
    await event(2, 'second, committed late');
    assert.equal((await service.runOnce()).events, 1);
    assert.equal((await service.runOnce()).events, 0, 'dispatched once');
    const reasons = receiver.requests.map((request) => JSON.parse(request.body).data.reason);
    assert.deepEqual(reasons.slice(0, 2).sort(), ['first', 'third'], 'sent concurrently, in any order');
    assert.deepEqual(reasons.slice(2), ['second, committed late']);
  } finally {
    await service.stop();
    await receiver.close();
    await opened.close();
  }
});
