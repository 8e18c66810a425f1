/**
 * Email end to end below the API, against a real SMTP server (smtp-server, AUTH required) and the
 * `.eml` outbox: policy alerts, legacy per-pool email honouring notification_filter, deprecation notices
 * driven by a ManualClock (sent while any pool lists an address, stopped once all are empty), and the
 * SMTP password never reaching the logs.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { buildConfig } from '../../src/config/load.js';
import { outboundPolicy } from '../../src/config/outbound.js';
import { listHistory } from '../../src/notifications/queries/history.js';
import { listDeliveries } from '../../src/notifications/queries/outbox.js';
import { NotificationService } from '../../src/notifications/service.js';
import type { Store } from '../../src/store/database.js';
import { openTestStore } from '../helpers/store.js';
import {
  capturingLogger,
  insertAccount,
  insertEvent,
  insertHealthPolicy,
  insertPool,
  parseMail,
  setNotificationEmail,
  startSmtp,
} from './helpers.js';

const DAY = 86_400_000;

interface Fixture {
  store: Store;
  dataDir: string;
  clock: ManualClock;
  service: NotificationService;
  lines: string[];
  account: string;
  close(): Promise<void>;
}

async function setup(smtpUrl: string | undefined, apiBase?: string): Promise<Fixture> {
  const opened = await openTestStore();
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const { logger, lines } = capturingLogger();
  const config = buildConfig(
    {
      data_dir: opened.location.data_dir,
      ...(smtpUrl ? { smtp_url: smtpUrl } : {}),
      mail_from: 'Switchyard <sy@example.net>',
    },
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
    ...(apiBase === undefined ? {} : { apiBase }),
  });
  const account = await insertAccount(opened.store);
  return {
    store: opened.store,
    dataDir: opened.location.data_dir,
    clock,
    service,
    lines,
    account,
    async close() {
      await service.stop();
      await opened.close();
    },
  };
}

describe('email over SMTP', () => {
  test('policy alerts and legacy email: clear content, one email per address and event, password never logged', async () => {
    const smtp = await startSmtp();
    const f = await setup(smtp.url);
    try {
      const pool = await insertPool(f.store, f.account, {
        name: 'mainnet-a',
        notification_email: 'legacy@example.com, Ops@example.com',
      });
      const policyId = await insertHealthPolicy(f.store, f.account, {
        name: 'paging',
        mechanisms: { email: [{ id: 'ops@example.com' }] },
        at: new Date(f.clock.now()).toISOString(),
      });
      await insertEvent(f.store, {
        account_id: f.account,
        pool_id: pool,
        pool_name: 'mainnet-a',
        origin_name: 'node-a',
        origin_address: 'https://user:key@rpc.example.org/v3/0123456789abcdef0123456789abcdef?x=1',
        new_health: 'Unhealthy',
        reason: 'timeout after 2 s',
        occurred_at: '2026-03-01T11:59:58.000Z',
      });
      await f.service.runOnce();
      const alerts = smtp.messages.filter((m) => !parseMail(m.raw).headers.subject?.includes('deprecated'));
      assert.deepEqual(alerts.map((m) => m.to.join()).sort(), ['legacy@example.com', 'ops@example.com']);
      assert.equal(smtp.logins.length, smtp.messages.length, 'every message was sent after AUTH');
      assert.ok(
        smtp.authAttempts.every((attempt) => attempt.secure),
        'AUTH only inside TLS (STARTTLS)',
      );

      const policyReceived = alerts.find((m) => m.to[0] === 'ops@example.com');
      const policyMail = parseMail(policyReceived?.raw ?? '');
      // The server advertises 8BITMIME (smtp-server's default), so the body travels as plain UTF-8.
      assert.equal(policyReceived?.bodyType, '8bitmime');
      assert.equal(policyMail.headers['content-transfer-encoding'], '8bit');
      assert.ok(policyReceived?.raw.includes('Healthy → Unhealthy'));
      assert.equal(policyMail.headers.subject, '[Switchyard] Origin node-a (pool mainnet-a) is Unhealthy');
      assert.equal(policyMail.headers.from, 'Switchyard <sy@example.net>');
      assert.match(policyMail.headers['message-id'] ?? '', /^<msg_[0-9a-f]{32}@switchyard>$/);
      assert.ok(policyMail.headers.date);
      for (const fact of [
        'Healthy → Unhealthy',
        'mainnet-a',
        'node-a',
        'timeout after 2 s',
        '2026-03-01T11:59:58.000Z',
        `/accounts/${f.account}/alerting/v3/policies/${policyId}`,
        'ALERT_STATE_EVENT_START',
      ]) {
        assert.ok(policyMail.text.includes(fact), `policy email mentions ${fact}:\n${policyMail.text}`);
      }
      assert.ok(!policyMail.text.includes('key@') && !policyMail.text.includes('0123456789abcdef0123'), 'no API key');

      const legacyMail = parseMail(alerts.find((m) => m.to[0] === 'legacy@example.com')?.raw ?? '');
      assert.match(legacyMail.text, /notification_email/);
      assert.match(legacyMail.text, /deprecated/);

      const history = await listHistory(f.store.db, f.account, {}, 100, 0);
      assert.ok(history.some((row) => row.mechanism === 'ops@example.com' && row.policy_id === policyId));
      assert.ok(history.some((row) => row.mechanism === 'legacy@example.com' && row.policy_id === null));
      const password = new URL(smtp.url).password;
      assert.ok(!f.lines.some((line) => line.includes(password)), 'the SMTP password is never logged');
      assert.ok(
        f.lines.some((line) => line.includes('notifications ready') && line.includes('smtp://***:***@127.0.0.1')),
      );
    } finally {
      await f.close();
      await smtp.close();
    }
  });

  test('a permanent SMTP rejection (550) is retried like any failure, and logged as an error at once', async () => {
    const smtp = await startSmtp(undefined, undefined, ['gone@example.com']);
    const f = await setup(smtp.url);
    try {
      const pool = await insertPool(f.store, f.account, { name: 'bounce' });
      await insertHealthPolicy(f.store, f.account, {
        name: 'bounce',
        mechanisms: { email: [{ id: 'gone@example.com' }, { id: 'ok@example.com' }] },
        at: new Date(f.clock.now()).toISOString(),
      });
      await insertEvent(f.store, {
        account_id: f.account,
        pool_id: pool,
        pool_name: 'bounce',
        new_health: 'Unhealthy',
      });
      await f.service.runOnce();
      assert.deepEqual(
        smtp.messages.map((m) => m.to.join()),
        ['ok@example.com'],
      );
      const rows = await listDeliveries(f.store.db, f.account);
      const bounced = rows.find((row) => row.mechanism === 'gone@example.com');
      assert.equal(bounced?.status, 'pending', 'not dropped: kept for retries');
      assert.match(bounced?.last_error ?? '', /SMTP 550/);
      const logged = f.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.ok(
        logged.some(
          (line) =>
            line.level === 'error' && line.mechanism === 'gone@example.com' && /permanent/.test(String(line.msg)),
        ),
        'logged at error level',
      );
      f.clock.set(Date.parse(bounced?.next_attempt_at ?? ''));
      await f.service.runOnce();
      const retried = (await listDeliveries(f.store.db, f.account)).find((row) => row.id === bounced?.id);
      assert.equal(retried?.attempts, 2, 'retried on the normal schedule');
    } finally {
      await f.close();
      await smtp.close();
    }
  });

  test('legacy notification_filter: disable, healthy true/false/null per event source', async () => {
    const smtp = await startSmtp();
    const f = await setup(smtp.url);
    try {
      const pools = {
        onlyHealthyOrigins: await insertPool(f.store, f.account, {
          name: 'f1',
          notification_email: 'f1@example.com',
          notification_filter: { origin: { healthy: true }, pool: null },
        }),
        noPoolEvents: await insertPool(f.store, f.account, {
          name: 'f2',
          notification_email: 'f2@example.com',
          notification_filter: { pool: { disable: true }, origin: { healthy: false } },
        }),
        none: await insertPool(f.store, f.account, { name: 'f3', notification_email: '' }),
      };
      const cases: {
        pool: string;
        name: string;
        source: 'origin' | 'pool';
        health: 'Healthy' | 'Unhealthy';
        to: string[];
      }[] = [
        { pool: pools.onlyHealthyOrigins, name: 'f1', source: 'origin', health: 'Unhealthy', to: [] },
        { pool: pools.onlyHealthyOrigins, name: 'f1', source: 'origin', health: 'Healthy', to: ['f1@example.com'] },
        { pool: pools.onlyHealthyOrigins, name: 'f1', source: 'pool', health: 'Unhealthy', to: ['f1@example.com'] },
        { pool: pools.noPoolEvents, name: 'f2', source: 'pool', health: 'Unhealthy', to: [] },
        { pool: pools.noPoolEvents, name: 'f2', source: 'origin', health: 'Unhealthy', to: ['f2@example.com'] },
        { pool: pools.noPoolEvents, name: 'f2', source: 'origin', health: 'Healthy', to: [] },
        { pool: pools.none, name: 'f3', source: 'pool', health: 'Unhealthy', to: [] },
      ];
      for (const c of cases) {
        await insertEvent(f.store, {
          account_id: f.account,
          pool_id: c.pool,
          pool_name: c.name,
          event_source: c.source,
          new_health: c.health,
        });
        const before = smtp.messages.length;
        await f.service.runOnce();
        const got = smtp.messages
          .slice(before)
          .filter((m) => !parseMail(m.raw).headers.subject?.includes('deprecated'))
          .map((m) => m.to.join());
        assert.deepEqual(got, c.to, JSON.stringify(c));
      }
    } finally {
      await f.close();
      await smtp.close();
    }
  });

  test('deprecation notices: soon after start, at most once per interval, until every pool is empty', async () => {
    const smtp = await startSmtp();
    const f = await setup(smtp.url);
    try {
      const other = await insertAccount(f.store);
      const a = await insertPool(f.store, f.account, { name: 'a', notification_email: 'x@example.com,y@example.com' });
      const b = await insertPool(f.store, f.account, { name: 'b', notification_email: 'y@example.com' });
      await insertPool(f.store, f.account, { name: 'c', notification_email: '' });
      const z = await insertPool(f.store, other, { name: 'z', notification_email: 'z@example.com' });
      const notices = () => smtp.messages.filter((m) => parseMail(m.raw).headers.subject?.includes('deprecated'));
      const round = async () => {
        const before = notices().length;
        await f.service.runOnce();
        return notices()
          .slice(before)
          .map((m) => m.to.join())
          .sort();
      };

      assert.deepEqual(await round(), ['x@example.com', 'y@example.com', 'z@example.com'], 'first pass after start');
      const y = parseMail(notices().find((m) => m.to[0] === 'y@example.com')?.raw ?? '');
      assert.match(y.headers.subject ?? '', new RegExp(f.account));
      for (const fact of [
        '  - a',
        '  - b',
        'PATCH',
        '"notification_email": ""',
        'page=2',
        'alerting/v3/policies',
        'notification_migration',
        '24 hours',
      ]) {
        assert.ok(y.text.includes(fact), `notice mentions ${fact}:\n${y.text}`);
      }
      assert.deepEqual(await round(), [], 'not twice in a row');
      f.clock.advance(DAY - 1);
      assert.deepEqual(await round(), [], 'not before the interval');
      f.clock.advance(1);
      assert.deepEqual(await round(), ['x@example.com', 'y@example.com', 'z@example.com'], 'again after 24 h');

      await setNotificationEmail(f.store, a, '');
      f.clock.advance(DAY);
      assert.deepEqual(await round(), ['y@example.com', 'z@example.com'], 'x is no longer listed anywhere');

      // A notice queued while the mail server is unreachable is dropped once the account is migrated.
      await setNotificationEmail(f.store, z, '');
      await smtp.close();
      f.clock.advance(DAY);
      await f.service.runOnce();
      const queued = (await listDeliveries(f.store.db, f.account)).filter((d) => d.status === 'pending');
      assert.deepEqual(
        queued.map((d) => [d.kind, d.mechanism]),
        [['deprecation_notice', 'y@example.com']],
      );
      await setNotificationEmail(f.store, b, '');
      f.clock.advance(60_000);
      await f.service.runOnce();
      const [cancelled] = (await listDeliveries(f.store.db, f.account)).filter((d) => d.id === queued[0]?.id);
      assert.equal(cancelled?.status, 'cancelled');

      f.clock.advance(7 * DAY);
      const before = smtp.messages.length;
      await f.service.runOnce();
      assert.equal(smtp.messages.length, before, 'no notice once every pool is empty');
      assert.equal((await listDeliveries(f.store.db)).filter((d) => d.status === 'pending').length, 0);
    } finally {
      await f.close();
      await smtp.close();
    }
  });
});

describe('email outbox', () => {
  test('without smtp_url, mail is written as RFC 5322 .eml files to data_dir/outbox, readable with cat', async () => {
    // A long API base makes every URL line longer than 76 characters (quoted-printable would break them).
    const apiBase = 'https://switchyard-management.example.internal:8443/client/v4';
    const f = await setup(undefined, apiBase);
    try {
      const pool = await insertPool(f.store, f.account, { name: 'outbox', notification_email: 'legacy@example.com' });
      await insertEvent(f.store, {
        account_id: f.account,
        pool_id: pool,
        pool_name: 'outbox',
        event_source: 'pool',
        new_health: 'Unhealthy',
      });
      await f.service.runOnce();
      const dir = join(f.dataDir, 'outbox');
      const files = readdirSync(dir).sort();
      assert.equal(files.length, 2, `a legacy alert and a deprecation notice: ${files}`);
      assert.ok(files.every((file) => file.endsWith('.eml')));
      for (const file of files) {
        const raw = readFileSync(join(dir, file), 'utf8');
        assert.ok(!/[^\r]\n/.test(raw), 'CRLF line endings');
        const mail = parseMail(raw);
        assert.equal(mail.headers.to, 'legacy@example.com');
        assert.equal(mail.headers.from, 'Switchyard <sy@example.net>');
        assert.equal(mail.headers['mime-version'], '1.0');
        assert.ok(mail.headers.date && mail.headers['message-id'] && mail.headers.subject);
      }
      const alert = files
        .map((file) => parseMail(readFileSync(join(dir, file), 'utf8')))
        .find((m) => m.headers.subject?.includes('Pool outbox'));
      assert.equal(alert?.headers.subject, '[Switchyard] Pool outbox is Unhealthy');
      assert.match(alert?.text ?? '', /Healthy → Unhealthy/);

      // Readable as a file: the bodies are the literal UTF-8 text, not quoted-printable.
      const raws = files.map((file) => readFileSync(join(dir, file), 'utf8'));
      const base = `${apiBase}/accounts/${f.account}`;
      const alertRaw = raws.find((raw) => raw.includes('Pool outbox is Unhealthy')) ?? '';
      const noticeRaw = raws.find((raw) => raw !== alertRaw) ?? '';
      for (const raw of raws) {
        // 8bit for the alert (its arrow); the notice is ASCII, so 7bit, also with lines over 76 characters.
        assert.equal(parseMail(raw).headers['content-transfer-encoding'], raw === alertRaw ? '8bit' : '7bit');
        assert.ok(!/=\r\n/.test(raw.slice(raw.indexOf('\r\n\r\n'))), 'no soft line breaks in the body');
      }
      assert.ok(alertRaw.includes('Healthy → Unhealthy'), 'the arrow as UTF-8');
      assert.ok(alertRaw.includes(`(POST ${base}/alerting/v3/policies)`), 'the URL unbroken');
      for (const url of [
        `POST ${base}/alerting/v3/policies`,
        `PATCH ${base}/load_balancers/pools?page=1&per_page=25`,
        `GET ${base}/load_balancers/notification_migration`,
      ]) {
        assert.ok(noticeRaw.includes(url), `the notice holds ${url} unbroken`);
      }
    } finally {
      await f.close();
    }
  });
});
