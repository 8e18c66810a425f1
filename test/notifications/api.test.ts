/**
 * The notification API of a real in-process Switchyard, through the official `cloudflare` SDK where it
 * has the call and plain fetch for error shapes: webhook destinations (test message, 201, write-only
 * secret, last_success/last_failure, refused targets, in-use delete), policies (CRUD and the 400s that
 * name the bad value and the allowed ones), history (SDK auto-paging, since/before, past the end) and
 * the notification_migration status before and after the bulk PATCH. Alerts flow through the running
 * background dispatcher from inserted health_events rows.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import Cloudflare from 'cloudflare';
import { createToken } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/clock.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { testStoreLocation } from '../helpers/store.js';
import {
  capturingLogger,
  insertAccount,
  insertEvent,
  insertPool,
  type Receiver,
  startReceiver,
  waitFor,
} from './helpers.js';

const SECRET = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;

let app: TestApp;
let receiver: Receiver;
let account: string;
let token: string;
let cf: Cloudflare;
let lines: string[];
let cleanup = (): void => {};

interface Envelope {
  success: boolean;
  errors: { code: number; message: string }[];
  result: unknown;
  result_info?: Record<string, number>;
}

async function call(
  method: string,
  path: string,
  body?: unknown,
  as = token,
): Promise<{ status: number; body: Envelope; text: string }> {
  const response = await fetch(`${app.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${as}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Envelope, text };
}

const acct = (path: string) => `/accounts/${account}${path}`;

async function createPool(name: string, notification_email = ''): Promise<string> {
  const { status, body } = await call('POST', acct('/load_balancers/pools'), {
    name,
    origins: [{ name: 'o0', address: 'http://127.0.0.1:9/' }],
    notification_email,
  });
  assert.equal(status, 200, JSON.stringify(body));
  return (body.result as { id: string }).id;
}

before(async () => {
  const location = await testStoreLocation();
  cleanup = location.cleanup;
  const captured = capturingLogger();
  lines = captured.lines;
  app = await startApp(
    location.database_url ? { database_url: location.database_url, log_level: 'debug' } : { log_level: 'debug' },
    {
      logger: captured.logger,
    },
  );
  account = app.config.account_id;
  token = (await createToken(app.store.db, systemClock, { accountId: account, readOnly: false })).token;
  cf = new Cloudflare({ apiToken: token, baseURL: app.apiUrl, maxRetries: 0 });
  receiver = await startReceiver();
});

after(async () => {
  await app?.close();
  await receiver?.close();
  cleanup();
});

describe('webhook destinations', () => {
  test('create sends a test message and answers 201; the secret is write-only', async () => {
    const { status, body } = await call('POST', acct('/alerting/v3/destinations/webhooks'), {
      name: 'ops',
      url: `${receiver.url}/ops`,
      secret: SECRET,
    });
    assert.equal(status, 201);
    const id = (body.result as { id: string }).id;
    const test = receiver.requests.at(-1);
    assert.equal(test?.url, '/hook/ops');
    assert.match(JSON.parse(test?.body ?? '{}').text, /test message/);
    assert.equal(test?.headers['cf-webhook-auth'], SECRET);
    assert.match(String(test?.headers['webhook-signature']), /^v1,/);

    const got = await cf.alerting.destinations.webhooks.get(id, { account_id: account });
    assert.equal(got.name, 'ops');
    assert.equal(got.type, 'generic');
    assert.ok(got.last_success);
    assert.equal(got.last_failure, null);
    const listed = await call('GET', acct('/alerting/v3/destinations/webhooks'));
    const single = await call('GET', acct(`/alerting/v3/destinations/webhooks/${id}`));
    for (const text of [listed.text, single.text]) {
      assert.ok(!text.includes(SECRET) && !text.includes('secret'), 'no secret in responses');
    }
    // Through the SDK too (it does not page this list).
    const viaSdk = [];
    for await (const hook of cf.alerting.destinations.webhooks.list({ account_id: account })) viaSdk.push(hook.id);
    assert.deepEqual(viaSdk, [id]);
  });

  test('a failing test message is a 400 and saves nothing; refused targets name the reason', async () => {
    receiver.status = 500;
    const failed = await call('POST', acct('/alerting/v3/destinations/webhooks'), {
      name: 'bad',
      url: `${receiver.url}/bad`,
    });
    receiver.status = 200;
    assert.equal(failed.status, 400);
    assert.equal(failed.body.errors[0]?.code, 17000);
    assert.match(failed.body.errors[0]?.message ?? '', /HTTP 500/);
    await receiver.down();
    const refused = await call('POST', acct('/alerting/v3/destinations/webhooks'), {
      name: 'down',
      url: `${receiver.url}/down`,
    });
    await receiver.reopen();
    assert.equal(refused.status, 400);
    assert.match(refused.body.errors[0]?.message ?? '', /ECONNREFUSED/);
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fe80::1]:8080/',
      'http://metadata.google.internal/',
      'ftp://example.com/',
    ]) {
      const res = await call('POST', acct('/alerting/v3/destinations/webhooks'), { name: 'meta', url });
      assert.equal(res.status, 400, url);
      assert.equal(res.body.errors[0]?.code, 1002);
      assert.match(res.body.errors[0]?.message ?? '', /^url: /);
    }
    const all = await call('GET', acct('/alerting/v3/destinations/webhooks'));
    assert.deepEqual(
      (all.body.result as { name: string }[]).map((d) => d.name),
      ['ops'],
    );
  });

  test('update re-tests; a failure records last_failure and changes nothing', async () => {
    const [dest] = (await call('GET', acct('/alerting/v3/destinations/webhooks'))).body.result as {
      id: string;
      url: string;
    }[];
    assert.ok(dest);
    receiver.status = 404;
    const failed = await call('PUT', acct(`/alerting/v3/destinations/webhooks/${dest.id}`), {
      name: 'ops',
      url: `${receiver.url}/moved`,
    });
    receiver.status = 200;
    assert.equal(failed.status, 400);
    const after = (await call('GET', acct(`/alerting/v3/destinations/webhooks/${dest.id}`))).body.result as Record<
      string,
      unknown
    >;
    assert.equal(after.url, dest.url);
    assert.ok(after.last_failure);
    const ok = await cf.alerting.destinations.webhooks.update(dest.id, {
      account_id: account,
      name: 'ops2',
      url: `${receiver.url}/ops`,
    });
    assert.equal(ok.id, dest.id);
    assert.equal(receiver.requests.at(-1)?.headers['cf-webhook-auth'], SECRET, 'PUT without secret keeps it');
  });
});

describe('policies', () => {
  let destination: string;
  let poolA: string;
  before(async () => {
    destination =
      ((await call('GET', acct('/alerting/v3/destinations/webhooks'))).body.result as { id: string }[])[0]?.id ?? '';
    poolA = await createPool('alpha');
  });

  test('CRUD through the SDK', async () => {
    const created = await cf.alerting.policies.create({
      account_id: account,
      name: 'pool health',
      alert_type: 'load_balancing_health_alert',
      enabled: true,
      mechanisms: { webhooks: [{ id: destination }], email: [{ id: 'ops@example.com' }] },
      filters: { pool_id: [poolA], new_health: ['Unhealthy', 'Healthy'], event_source: ['origin'] },
    });
    assert.match(created.id ?? '', /^[0-9a-f-]{36}$/);
    const got = await cf.alerting.policies.get(created.id ?? '', { account_id: account });
    assert.equal(got.name, 'pool health');
    assert.equal(got.enabled, true);
    assert.deepEqual(got.filters, { pool_id: [poolA], new_health: ['Unhealthy', 'Healthy'], event_source: ['origin'] });
    assert.deepEqual(got.mechanisms, { email: [{ id: 'ops@example.com' }], webhooks: [{ id: destination }] });
    await cf.alerting.policies.update(created.id ?? '', { account_id: account, enabled: false });
    const updated = await cf.alerting.policies.get(created.id ?? '', { account_id: account });
    assert.equal(updated.enabled, false);
    assert.equal(updated.name, 'pool health', 'PUT changes only the named fields');

    const inUse = await call('DELETE', acct(`/alerting/v3/destinations/webhooks/${destination}`));
    assert.equal(inUse.status, 400);
    assert.match(inUse.body.errors[0]?.message ?? '', /pool health/);

    // A policy stays editable after one of its pools is deleted.
    const doomed = await createPool('doomed');
    const scoped = await cf.alerting.policies.create({
      account_id: account,
      name: 'scoped',
      alert_type: 'load_balancing_health_alert',
      enabled: true,
      mechanisms: { email: [{ id: 'ops@example.com' }] },
      filters: { pool_id: [poolA, doomed] },
    });
    assert.equal((await call('DELETE', acct(`/load_balancers/pools/${doomed}`))).status, 200);
    const edited = await call('PUT', acct(`/alerting/v3/policies/${scoped.id}`), { enabled: false });
    assert.equal(edited.status, 200, JSON.stringify(edited.body.errors));
    const other = await createPool('other');
    const added = await call('PUT', acct(`/alerting/v3/policies/${scoped.id}`), {
      filters: { pool_id: [doomed, 'nope'] },
    });
    assert.equal(added.status, 400, 'a new unknown pool id is still refused');
    assert.match(added.body.errors[0]?.message ?? '', /filters\.pool_id\.1: "nope"/);
    assert.equal(
      (await call('PUT', acct(`/alerting/v3/policies/${scoped.id}`), { filters: { pool_id: [other] } })).status,
      200,
    );
    assert.equal((await call('DELETE', acct(`/alerting/v3/policies/${scoped.id}`))).status, 200);

    const deleted = await call('DELETE', acct(`/alerting/v3/policies/${created.id}`));
    assert.equal(deleted.status, 200);
    assert.equal(deleted.body.result, null);
    assert.equal((await call('GET', acct(`/alerting/v3/policies/${created.id}`))).status, 404);
  });

  test('bad values are 400 / 1002 naming the value and the allowed ones', async () => {
    const other = await insertAccount(app.store);
    const foreignPool = randomUUID().replaceAll('-', '');
    const base = {
      name: 'x',
      alert_type: 'load_balancing_health_alert',
      enabled: true,
      mechanisms: { webhooks: [{ id: destination }] },
    };
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { ...base, alert_type: 'universal_ssl_event_type' },
        /alert_type: "universal_ssl_event_type" .*"load_balancing_health_alert"/,
      ],
      [
        { ...base, filters: { new_health: ['Degraded'] } },
        /filters\.new_health\.0: "Degraded" .*"Unhealthy", "Healthy"/,
      ],
      [
        { ...base, filters: { event_source: ['pool', 'monitor'] } },
        /filters\.event_source\.1: "monitor" .*"pool", "origin"/,
      ],
      [
        { ...base, filters: { pool_id: [poolA, foreignPool] } },
        new RegExp(`filters\\.pool_id\\.1: "${foreignPool}" is not a pool of this account`),
      ],
      [
        { ...base, filters: { zones: ['z'] } },
        /filters\.zones: unknown filter .*"pool_id", "new_health", "event_source"/,
      ],
      [{ ...base, filters: { new_health: [] } }, /filters\.new_health: must list at least one value/],
      [
        { ...base, mechanisms: { email: [{ id: 'not-an-address' }] } },
        /mechanisms\.email\.0\.id: "not-an-address" is not a valid email address/,
      ],
      [
        { ...base, mechanisms: { webhooks: [{ id: 'nope' }] } },
        /mechanisms\.webhooks\.0\.id: "nope" is not a webhook destination/,
      ],
      [
        { ...base, mechanisms: { pagerduty: [{ id: 'p' }] } },
        /mechanisms\.pagerduty: unsupported mechanism; allowed: "email", "webhooks"/,
      ],
      [{ ...base, mechanisms: {} }, /mechanisms: give at least one target/],
      [{ ...base, enabled: 'yes' }, /enabled/],
      [{ name: 'x', alert_type: 'load_balancing_health_alert', enabled: true }, /mechanisms: is required/],
    ];
    for (const [body, message] of cases) {
      const res = await call('POST', acct('/alerting/v3/policies'), body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.errors[0]?.code, 1002);
      assert.match(res.body.errors[0]?.message ?? '', message);
    }
    // A pool of another account is "not a pool of this account", never a leak of the other account.
    const theirs = await insertPool(app.store, other, { name: 'theirs' });
    const res = await call('POST', acct('/alerting/v3/policies'), { ...base, filters: { pool_id: [theirs] } });
    assert.equal(res.status, 400);
    assert.match(res.body.errors[0]?.message ?? '', /is not a pool of this account/);
    assert.equal((await call('GET', acct('/alerting/v3/policies'))).body.result_info?.total_count, 0);
    // Another account's token cannot read these policies at all.
    const foreignToken = (await createToken(app.store.db, systemClock, { accountId: other, readOnly: false })).token;
    assert.equal((await call('GET', acct('/alerting/v3/policies'), undefined, foreignToken)).status, 403);
  });
});

describe('alerts, history and migration status', () => {
  test('alerts reach the webhook; history pages like Cloudflare; since/before filter', async () => {
    const destination =
      ((await call('GET', acct('/alerting/v3/destinations/webhooks'))).body.result as { id: string }[])[0]?.id ?? '';
    const pool = await createPool('history');
    await cf.alerting.policies.create({
      account_id: account,
      name: 'history',
      alert_type: 'load_balancing_health_alert',
      enabled: true,
      mechanisms: { webhooks: [{ id: destination }] },
      filters: { pool_id: [pool] },
    });
    const seen = receiver.requests.length;
    for (let i = 0; i < 6; i++) {
      await insertEvent(app.store, {
        account_id: account,
        pool_id: pool,
        pool_name: 'history',
        new_health: i % 2 ? 'Healthy' : 'Unhealthy',
      });
    }
    await waitFor(() => receiver.requests.length - seen >= 6, 'six alerts at the receiver');
    // The receiver sees a request before the sender records it as sent: wait for the history too.
    await waitFor(
      async () => (await call('GET', acct('/alerting/v3/history'))).body.result_info?.total_count === 6,
      'six history entries',
    );
    const all = [];
    for await (const item of cf.alerting.history.list({ account_id: account, per_page: 5 })) all.push(item);
    assert.equal(all.length, 6);
    assert.ok(
      all.every(
        (item) => item.mechanism === destination && item.mechanism_type === 'webhook' && item.name === 'history',
      ),
    );
    const sent = all.map((item) => item.sent ?? '');
    assert.deepEqual([...sent].sort().reverse(), sent, 'newest first');
    const body = JSON.parse(all[0]?.alert_body ?? '{}');
    assert.equal(body.alert_type, 'load_balancing_health_alert');

    const past = await call('GET', acct('/alerting/v3/history?page=3&per_page=5'));
    assert.deepEqual(past.body.result, []);
    assert.equal(past.body.result_info?.total_count, 6);
    const middle = sent[2] ?? '';
    const since = await call('GET', acct(`/alerting/v3/history?since=${encodeURIComponent(middle)}`));
    assert.ok((since.body.result as { sent: string }[]).every((item) => item.sent >= middle));
    const beforeRes = await call('GET', acct(`/alerting/v3/history?before=${encodeURIComponent(middle)}`));
    assert.ok((beforeRes.body.result as { sent: string }[]).every((item) => item.sent < middle));
    assert.equal((since.body.result as unknown[]).length + (beforeRes.body.result as unknown[]).length, 6);
    for (const bad of ['per_page=4', 'since=yesterday', 'before=2026-01-01']) {
      const res = await call('GET', acct(`/alerting/v3/history?${bad}`));
      assert.equal(res.status, 400, bad);
      assert.match(res.body.errors[0]?.message ?? '', new RegExp(`^${bad.split('=')[0]}: `));
    }
    assert.ok(!lines.some((line) => line.includes(SECRET)), 'the webhook secret never reaches the logs');
  });

  test('notification_migration reports legacy pools until the bulk PATCH clears them', async () => {
    await createPool('legacy-1', 'a@example.com,B@example.com');
    await createPool('legacy-2', 'b@example.com');
    const before = await call('GET', acct('/load_balancers/notification_migration'));
    assert.deepEqual(before.body.result, {
      complete: false,
      pools_with_legacy_email: 2,
      addresses: ['a@example.com', 'b@example.com'],
    });
    const patched = await call('PATCH', acct('/load_balancers/pools?per_page=1000'), { notification_email: '' });
    assert.equal(patched.status, 200);
    const after = await call('GET', acct('/load_balancers/notification_migration'));
    assert.deepEqual(after.body.result, { complete: true, pools_with_legacy_email: 0, addresses: [] });
  });
});
