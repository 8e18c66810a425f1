/**
 * End to end with the real health engine: a Switchyard in-process with one monitored pool whose origin
 * is a real local HTTP server. Killing the origin makes the monitor write health events; the running
 * dispatcher turns them into a webhook START (origin and pool) for an account-level policy created
 * through the SDK, plus legacy email to the pool's notification_email (outbox); bringing it back yields
 * the matching ENDs with the same correlation ids.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Cloudflare from 'cloudflare';
import { createToken } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/clock.js';
import { TestOrigin } from '../health/test-origin.js';
import { startApp } from '../helpers/app.js';
import { parseMail, startReceiver, waitFor } from './helpers.js';

test('origin down → START alerts and legacy email; back up → END with the same correlation id', async () => {
  const origin = await TestOrigin.start();
  const receiver = await startReceiver();
  const app = await startApp({
    pools: [
      {
        name: 'e2e',
        origins: [{ name: 'node-a', address: origin.url }],
        notification_email: 'legacy@example.com',
        monitor: { type: 'http', interval: 1, timeout: 1, retries: 0, consecutive_down: 1, consecutive_up: 1 },
      },
    ],
  });
  try {
    const account = app.config.account_id;
    const token = (await createToken(app.store.db, systemClock, { accountId: account, readOnly: false })).token;
    const cf = new Cloudflare({ apiToken: token, baseURL: app.apiUrl, maxRetries: 0 });
    const destination = await cf.alerting.destinations.webhooks.create({
      account_id: account,
      name: 'e2e',
      url: receiver.url,
    });
    await cf.alerting.policies.create({
      account_id: account,
      name: 'everything',
      alert_type: 'load_balancing_health_alert',
      enabled: true,
      mechanisms: { webhooks: [{ id: destination.id ?? '' }] },
    });
    const alerts = () =>
      receiver.requests
        .map(
          (request) =>
            JSON.parse(request.body) as {
              alert_event?: string;
              alert_correlation_id: string;
              data: Record<string, string>;
            },
        )
        .filter((body) => body.alert_event !== undefined);

    await origin.down();
    await waitFor(
      () => alerts().filter((a) => a.alert_event === 'ALERT_STATE_EVENT_START').length >= 2,
      'origin and pool START',
      20_000,
    );
    const starts = alerts();
    const originStart = starts.find((a) => a.data.event_source === 'origin');
    const poolStart = starts.find((a) => a.data.event_source === 'pool');
    assert.equal(originStart?.data.origin_name, 'node-a');
    assert.equal(originStart?.data.new_health, 'Unhealthy');
    assert.equal(poolStart?.data.pool_name, 'e2e');

    await origin.up();
    await waitFor(
      () => alerts().filter((a) => a.alert_event === 'ALERT_STATE_EVENT_END').length >= 2,
      'origin and pool END',
      20_000,
    );
    const ends = alerts().filter((a) => a.alert_event === 'ALERT_STATE_EVENT_END');
    assert.equal(
      ends.find((a) => a.data.event_source === 'origin')?.alert_correlation_id,
      originStart?.alert_correlation_id,
    );
    assert.equal(
      ends.find((a) => a.data.event_source === 'pool')?.alert_correlation_id,
      poolStart?.alert_correlation_id,
    );

    const outbox = join(app.dataDir, 'outbox');
    const mails = await waitFor(() => {
      try {
        const parsed = readdirSync(outbox).map((file) => parseMail(readFileSync(join(outbox, file), 'utf8')));
        return parsed.length >= 5 ? parsed : undefined;
      } catch {
        return undefined;
      }
    }, 'legacy emails and the deprecation notice in the outbox');
    const subjects = mails.map((mail) => mail.headers.subject ?? '');
    assert.ok(
      subjects.some((s) => s.includes('deprecated')),
      subjects.join('\n'),
    );
    assert.ok(subjects.includes('[Switchyard] Origin node-a (pool e2e) is Unhealthy'), subjects.join('\n'));
    assert.ok(subjects.includes('[Switchyard] Pool e2e is Healthy'), subjects.join('\n'));
    assert.ok(mails.every((mail) => mail.headers.to === 'legacy@example.com'));

    const metrics = await (await fetch(app.apiUrl.replace(/\/client\/v4$/, '/metrics'))).text();
    assert.match(metrics, /switchyard_notification_attempts_total\{mechanism_type="webhook",outcome="sent"\} [1-9]/);
    assert.match(metrics, /switchyard_notification_attempts_total\{mechanism_type="email",outcome="sent"\} [1-9]/);
  } finally {
    await app.close();
    await receiver.close();
    await origin.down();
  }
});
