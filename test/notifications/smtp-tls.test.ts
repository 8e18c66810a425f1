/**
 * SMTP credentials never travel in clear text (SPEC §8 "Input hygiene"): against a real SMTP server
 * (smtp-server on port 0) that requires AUTH and offers NO STARTTLS, an `smtp://user:pass@…` URL
 * - by default sends no AUTH at all: the delivery fails with a clear, secret-free error, stays queued and
 *   is retried on the normal schedule, and the password appears in no log line;
 * - cannot be talked out of it by the URL's own query (`?ignoreTLS=true&requireTLS=false`);
 * - with `smtp_allow_insecure_auth: true` authenticates (in clear text) and delivers, with a warning at start.
 * A server offering STARTTLS gets AUTH only after the upgrade (test/notifications/email.test.ts covers delivery).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { buildConfig } from '../../src/config/load.js';
import { outboundPolicy } from '../../src/config/outbound.js';
import { listDeliveries } from '../../src/notifications/queries/outbox.js';
import { NotificationService } from '../../src/notifications/service.js';
import { openTestStore } from '../helpers/store.js';
import {
  capturingLogger,
  insertAccount,
  insertEvent,
  insertHealthPolicy,
  insertPool,
  type SmtpSink,
  startSmtp,
} from './helpers.js';

async function withService(
  smtp: SmtpSink,
  extra: Record<string, unknown>,
  run: (f: {
    service: NotificationService;
    clock: ManualClock;
    lines: string[];
    account: string;
    store: Awaited<ReturnType<typeof openTestStore>>['store'];
  }) => Promise<void>,
): Promise<void> {
  const opened = await openTestStore();
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const { logger, lines } = capturingLogger();
  const config = buildConfig(
    { data_dir: opened.location.data_dir, smtp_url: smtp.url, mail_from: 'Switchyard <sy@example.net>', ...extra },
    '(test)',
  );
  const service = new NotificationService({
    store: opened.store,
    secrets: opened.secrets,
    config,
    outbound: outboundPolicy(config),
    clock,
    logger,
    random: () => 0.5,
  });
  try {
    const account = await insertAccount(opened.store);
    const pool = await insertPool(opened.store, account, { name: 'tls-pool' });
    await insertHealthPolicy(opened.store, account, {
      name: 'tls',
      mechanisms: { email: [{ id: 'ops@example.com' }] },
      at: new Date(clock.now()).toISOString(),
    });
    await insertEvent(opened.store, {
      account_id: account,
      pool_id: pool,
      pool_name: 'tls-pool',
      new_health: 'Unhealthy',
    });
    await run({ service, clock, lines, account, store: opened.store });
  } finally {
    await service.stop();
    await opened.close();
  }
}

describe('SMTP credentials require TLS', () => {
  test('a server without STARTTLS gets no AUTH by default: the delivery fails clearly and is retried', async () => {
    const smtp = await startSmtp(undefined, undefined, [], { startTls: false });
    try {
      await withService(smtp, {}, async ({ service, clock, lines, account, store }) => {
        await service.runOnce();
        assert.deepEqual(smtp.authAttempts, [], 'no AUTH command reached the server');
        assert.equal(smtp.messages.length, 0);
        const [row] = await listDeliveries(store.db, account);
        assert.equal(row?.status, 'pending', 'kept for retries');
        assert.equal(row?.attempts, 1);
        assert.match(row?.last_error ?? '', /ETLSREQUIRED: the SMTP server did not start TLS/);
        assert.match(row?.last_error ?? '', /smtp_allow_insecure_auth/);

        clock.set(Date.parse(row?.next_attempt_at ?? ''));
        await service.runOnce();
        const [retried] = await listDeliveries(store.db, account);
        assert.equal(retried?.attempts, 2, 'retried on the normal schedule');
        assert.deepEqual(smtp.authAttempts, [], 'still no AUTH');

        const password = new URL(smtp.url).password;
        assert.ok(!lines.some((line) => line.includes(password)), 'the password is never logged');
        assert.ok(
          lines.some((line) => line.includes('"level":"error"') && line.includes('ETLSREQUIRED')),
          'the failure is logged at error level at once',
        );
      });
    } finally {
      await smtp.close();
    }
  });

  test("the URL's query cannot turn the rule off", async () => {
    const smtp = await startSmtp(undefined, undefined, [], { startTls: false });
    const weakened = { ...smtp, url: `${smtp.url}/?ignoreTLS=true&requireTLS=false&opportunisticTLS=true` };
    try {
      await withService(weakened, {}, async ({ service, account, store }) => {
        await service.runOnce();
        assert.deepEqual(smtp.authAttempts, []);
        const [row] = await listDeliveries(store.db, account);
        assert.match(row?.last_error ?? '', /ETLSREQUIRED/);
      });
    } finally {
      await smtp.close();
    }
  });

  test('smtp_allow_insecure_auth: true authenticates without TLS, with a warning at start', async () => {
    const smtp = await startSmtp(undefined, undefined, [], { startTls: false });
    try {
      await withService(smtp, { smtp_allow_insecure_auth: true }, async ({ service, lines, account, store }) => {
        await service.runOnce();
        assert.deepEqual(smtp.authAttempts, [{ user: 'mailer', secure: false }]);
        assert.deepEqual(
          smtp.messages.map((m) => m.to.join()),
          ['ops@example.com'],
        );
        const [row] = await listDeliveries(store.db, account);
        assert.equal(row?.status, 'sent');
        assert.ok(lines.some((line) => line.includes('"level":"warn"') && line.includes('smtp_allow_insecure_auth')));
      });
    } finally {
      await smtp.close();
    }
  });

  test('a server offering STARTTLS gets AUTH only inside TLS', async () => {
    const smtp = await startSmtp();
    try {
      await withService(smtp, {}, async ({ service }) => {
        await service.runOnce();
        assert.deepEqual(smtp.authAttempts, [{ user: 'mailer', secure: true }]);
        assert.equal(smtp.messages.length, 1);
      });
    } finally {
      await smtp.close();
    }
  });
});
