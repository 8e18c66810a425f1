/**
 * Events whose `seq` commits after a higher one (possible on PostgreSQL with concurrent writers) are not
 * lost: the dispatcher passes the gap (at once on SQLite, where such gaps cannot come from in-flight
 * transactions; after GAP_WAIT_MS, 10 s of the injected clock's monotonic time, on PostgreSQL) and keeps
 * re-checking the skipped seqs, so the late event is still dispatched — exactly once.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { buildConfig } from '../../src/config/load.js';
import { outboundPolicy } from '../../src/config/outbound.js';
import { GAP_WAIT_MS } from '../../src/notifications/dispatcher.js';
import { NotificationService } from '../../src/notifications/service.js';
import { openTestStore } from '../helpers/store.js';
import { insertAccount, insertPool, insertWebhookPolicy, startReceiver } from './helpers.js';

test('an event committed late with a lower seq is still dispatched once', async () => {
  const opened = await openTestStore();
  const receiver = await startReceiver();
  const clock = new ManualClock('2026-03-01T00:00:00Z');
  const config = buildConfig({ data_dir: opened.location.data_dir }, '(test)');
  const service = new NotificationService({
    store: opened.store,
    secrets: opened.secrets,
    config,
    outbound: outboundPolicy(config),
    clock,
  });
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
    if (store.dialect === 'postgres') {
      // Seq 2 may still be in flight: the dispatcher stops before the gap until it has lasted GAP_WAIT_MS.
      assert.equal((await service.runOnce()).events, 1, 'only the event before the gap');
      clock.advance(GAP_WAIT_MS - 1);
      assert.equal((await service.runOnce()).events, 0, 'the gap is waited for');
      clock.advance(1);
      assert.equal((await service.runOnce()).events, 1, 'the gap is passed once it lasted GAP_WAIT_MS');
    } else {
      assert.equal((await service.runOnce()).events, 2, 'no gap waits on SQLite');
    }
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
