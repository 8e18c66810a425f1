/**
 * Webhook delivery end to end below the API: policies and destinations in a real store, health events
 * inserted as the health engine writes them, a real HTTP receiver, deterministic passes and a
 * ManualClock. Covers the policy filter matrix, START/END correlation, the Cloudflare body, Standard
 * Webhooks signatures, retries with back-off until the receiver is back, and dead-lettering.
 */
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { buildConfig } from '../../src/config/load.js';
import { outboundPolicy } from '../../src/config/outbound.js';
import { RETRY_BASE_MS } from '../../src/notifications/backoff.js';
import { insertPolicy, type PolicyInput } from '../../src/notifications/queries/alert-policies.js';
import { getDestination, insertDestination } from '../../src/notifications/queries/destinations.js';
import { listHistory } from '../../src/notifications/queries/history.js';
import { listDeliveries } from '../../src/notifications/queries/outbox.js';
import { NotificationService } from '../../src/notifications/service.js';
import { verifyWebhook } from '../../src/notifications/signature.js';
import { openTestStore } from '../helpers/store.js';
import {
  capturingLogger,
  insertAccount,
  insertEvent,
  insertPool,
  type ReceivedRequest,
  type Receiver,
  startReceiver,
  waitFor,
} from './helpers.js';

const SECRET = `hook-secret-${randomUUID()}`;

interface Fixture extends Pick<Awaited<ReturnType<typeof openTestStore>>, 'store' | 'secrets'> {
  close(): Promise<void>;
  clock: ManualClock;
  receiver: Receiver;
  service: NotificationService;
  lines: string[];
  account: string;
}

async function setup(): Promise<Fixture> {
  const opened = await openTestStore();
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const receiver = await startReceiver();
  const { logger, lines } = capturingLogger();
  const config = buildConfig({ data_dir: opened.location.data_dir, webhooks: { timeout: 5 } }, '(test)');
  const service = new NotificationService({
    store: opened.store,
    secrets: opened.secrets,
    config,
    outbound: outboundPolicy(config),
    clock,
    logger,
    random: () => 0.5,
  });
  // The routing account (trusted by the outbound policy), so webhooks may reach the local receiver.
  const account = await insertAccount(opened.store, config.account_id);
  return {
    ...opened,
    clock,
    receiver,
    service,
    lines,
    account,
    async close() {
      await service.stop();
      await receiver.close();
      await opened.close();
    },
  };
}

function policy(
  name: string,
  destination: string,
  filters: Record<string, string[]> = {},
  enabled = true,
): PolicyInput {
  return {
    name,
    description: `${name} policy`,
    enabled,
    alert_type: 'load_balancing_health_alert',
    mechanisms: { webhooks: [{ id: destination }] },
    filters,
    alert_interval: null,
  };
}

async function destination(f: Fixture, account: string, path: string, secret: string | null = SECRET): Promise<string> {
  const id = randomUUID();
  const now = new Date(f.clock.now()).toISOString();
  const target = { name: path, url: `${f.receiver.url}/${path}`, secret };
  await insertDestination(f.store.db, f.secrets, account, id, target, now);
  return id;
}

function bodyOf(request: ReceivedRequest): Record<string, unknown> & { data: Record<string, unknown> } {
  return JSON.parse(request.body);
}

describe('webhook delivery', () => {
  let f: Fixture;
  before(async () => {
    f = await setup();
  });
  after(async () => {
    await f.close();
  });

  test('policy filters: pool_id, new_health, event_source, disabled, other account, pools created later', async () => {
    const { store, account } = f;
    const p1 = await insertPool(store, account, { name: 'alpha' });
    const p2 = await insertPool(store, account, { name: 'beta' });
    const other = await insertAccount(store);
    const now = new Date(f.clock.now()).toISOString();
    const policies: Record<string, Record<string, string[]>> = {
      all: {},
      pool1: { pool_id: [p1] },
      unhealthy: { new_health: ['Unhealthy'] },
      healthy: { new_health: ['Healthy'] },
      origin: { event_source: ['origin'] },
      pool: { event_source: ['pool'] },
      combo: { pool_id: [p2], new_health: ['Unhealthy'], event_source: ['pool'] },
    };
    for (const [name, filters] of Object.entries(policies)) {
      await insertPolicy(
        store.db,
        account,
        randomUUID(),
        policy(name, await destination(f, account, name), filters),
        now,
      );
    }
    await insertPolicy(
      store.db,
      account,
      randomUUID(),
      policy('off', await destination(f, account, 'off'), {}, false),
      now,
    );
    await insertPolicy(store.db, other, randomUUID(), policy('foreign', await destination(f, other, 'foreign')), now);
    // Created after the policies: covered by every policy without a pool_id filter.
    const p3 = await insertPool(store, account, { name: 'gamma' });

    const cases = [
      {
        event: { pool_id: p1, pool_name: 'alpha', event_source: 'origin', new_health: 'Unhealthy' },
        expect: ['all', 'origin', 'pool1', 'unhealthy'],
      },
      {
        event: { pool_id: p2, pool_name: 'beta', event_source: 'pool', new_health: 'Unhealthy' },
        expect: ['all', 'combo', 'pool', 'unhealthy'],
      },
      {
        event: { pool_id: p1, pool_name: 'alpha', event_source: 'origin', new_health: 'Healthy' },
        expect: ['all', 'healthy', 'origin', 'pool1'],
      },
      {
        event: { pool_id: p2, pool_name: 'beta', event_source: 'pool', new_health: 'Healthy' },
        expect: ['all', 'healthy', 'pool'],
      },
      {
        event: { pool_id: p3, pool_name: 'gamma', event_source: 'pool', new_health: 'Unhealthy' },
        expect: ['all', 'pool', 'unhealthy'],
      },
    ] as const;
    for (const { event, expect } of cases) {
      const id = await insertEvent(store, { account_id: account, ...event });
      const seen = f.receiver.requests.length;
      const pass = await f.service.runOnce();
      assert.equal(pass.events, 1);
      const got = f.receiver.requests.slice(seen);
      assert.ok(got.every((request) => bodyOf(request).data.event_id === id));
      const paths = got.map((request) => request.url.split('/').at(-1)).sort();
      assert.deepEqual(paths, expect, `event ${JSON.stringify(event)}`);
    }

    // START/END: the origin of alpha went down (case 1) and recovered (case 3) with one correlation id.
    const originAlerts = f.receiver.requests
      .filter((request) => request.url.endsWith('/all'))
      .map(bodyOf)
      .filter((body) => body.data.pool_name === 'alpha');
    assert.equal(originAlerts.length, 2);
    const [start, end] = originAlerts as [ReturnType<typeof bodyOf>, ReturnType<typeof bodyOf>];
    assert.equal(start.alert_event, 'ALERT_STATE_EVENT_START');
    assert.equal(end.alert_event, 'ALERT_STATE_EVENT_END');
    assert.equal(start.alert_correlation_id, end.alert_correlation_id);
    const betaAlerts = f.receiver.requests
      .filter((r) => r.url.endsWith('/all'))
      .map(bodyOf)
      .filter((b) => b.data.pool_name === 'beta');
    assert.equal(betaAlerts[0]?.alert_correlation_id, betaAlerts[1]?.alert_correlation_id);
    assert.notEqual(betaAlerts[0]?.alert_correlation_id, start.alert_correlation_id);

    // The Cloudflare body.
    assert.deepEqual(Object.keys(start).sort(), [
      'account_id',
      'alert_correlation_id',
      'alert_event',
      'alert_type',
      'data',
      'name',
      'policy_id',
      'policy_name',
      'text',
      'ts',
    ]);
    assert.equal(start.account_id, account);
    assert.equal(start.alert_type, 'load_balancing_health_alert');
    assert.equal(start.policy_name, 'all');
    assert.equal(typeof start.ts, 'number');
    assert.equal(start.data.new_health, 'Unhealthy');
    assert.equal(start.data.event_source, 'origin');
    assert.equal(start.data.origin_name, 'o0');
    assert.match(String(start.text), /alpha/);

    // History lists what was sent, newest first.
    const history = await listHistory(store.db, account, {}, 1000, 0);
    assert.equal(history.length, f.receiver.requests.filter((r) => !r.url.endsWith('/foreign')).length);
    assert.ok(history.every((row) => row.mechanism_type === 'webhook'));
  });

  test('signatures: cf-webhook-auth and Standard Webhooks headers verify against the raw body', async () => {
    assert.ok(f.receiver.requests.length > 0);
    const ids = new Set<string>();
    for (const request of f.receiver.requests) {
      const id = String(request.headers['webhook-id']);
      const timestamp = String(request.headers['webhook-timestamp']);
      const signature = String(request.headers['webhook-signature']);
      ids.add(id);
      assert.equal(request.headers['cf-webhook-auth'], SECRET);
      assert.equal(request.headers['content-type'], 'application/json');
      assert.equal(timestamp, String(Math.floor(f.clock.now() / 1000)));
      // Independent computation of the Standard Webhooks scheme (secret without whsec_ = its UTF-8 bytes).
      const mac = createHmac('sha256', Buffer.from(SECRET))
        .update(`${id}.${timestamp}.${request.body}`)
        .digest('base64');
      assert.equal(signature, `v1,${mac}`);
      assert.ok(verifyWebhook({ id, timestamp, signature, body: request.body, secret: SECRET }));
      assert.ok(!verifyWebhook({ id, timestamp, signature, body: `${request.body} `, secret: SECRET }));
      assert.ok(!verifyWebhook({ id, timestamp, signature, body: request.body, secret: `${SECRET}x` }));
    }
    assert.equal(ids.size, f.receiver.requests.length, 'each delivery has its own webhook-id');
    assert.ok(!f.lines.some((line) => line.includes(SECRET)), 'the secret never appears in logs');
  });

  test('a destination without secret gets no cf-webhook-auth and no signature', async () => {
    const pool = await insertPool(f.store, f.account, { name: 'nosecret' });
    const dest = await destination(f, f.account, 'plain', null);
    const now = new Date(f.clock.now()).toISOString();
    await insertPolicy(f.store.db, f.account, randomUUID(), policy('plain', dest, { pool_id: [pool] }), now);
    await insertEvent(f.store, {
      account_id: f.account,
      pool_id: pool,
      pool_name: 'nosecret',
      new_health: 'Unhealthy',
    });
    await f.service.runOnce();
    const request = f.receiver.requests.find((r) => r.url.endsWith('/plain'));
    assert.ok(request);
    assert.equal(request.headers['cf-webhook-auth'], undefined);
    assert.equal(request.headers['webhook-signature'], undefined);
    assert.match(String(request.headers['webhook-id']), /^msg_[0-9a-f]{32}$/);
  });
});

describe('background loop', () => {
  test("wake() (the health monitor's nudge) sends new alerts at once, without waiting for the poll", async () => {
    const f = await setup();
    // No email in this test, so the mail outbox directory is never used.
    const config = buildConfig({ data_dir: '/nonexistent', webhooks: { timeout: 5 } }, '(test)');
    // A poll of an hour: anything delivered within the test's bound came from the start pass or wake().
    const loop = new NotificationService({
      store: f.store,
      secrets: f.secrets,
      config,
      outbound: outboundPolicy(config),
      clock: f.clock,
      pollMs: 3_600_000,
    });
    try {
      const pool = await insertPool(f.store, f.account, { name: 'nudge' });
      const dest = await destination(f, f.account, 'nudge');
      await insertPolicy(
        f.store.db,
        f.account,
        randomUUID(),
        policy('nudge', dest),
        new Date(f.clock.now()).toISOString(),
      );
      await loop.start();
      await insertEvent(f.store, { account_id: f.account, pool_id: pool, pool_name: 'nudge', new_health: 'Unhealthy' });
      loop.wake();
      await waitFor(() => f.receiver.requests.length === 1, 'the alert after wake()', 10_000);
      await insertEvent(f.store, { account_id: f.account, pool_id: pool, pool_name: 'nudge', new_health: 'Healthy' });
      loop.wake();
      await waitFor(() => f.receiver.requests.length === 2, 'the second alert after wake()', 10_000);
      assert.deepEqual(
        f.receiver.requests.map((request) => bodyOf(request).alert_event),
        ['ALERT_STATE_EVENT_START', 'ALERT_STATE_EVENT_END'],
      );
    } finally {
      await loop.stop();
      await f.close();
    }
  });
});

describe('webhook retries', () => {
  test('receiver down → retried with back-off → delivered once it is back, same webhook-id', async () => {
    const f = await setup();
    try {
      const pool = await insertPool(f.store, f.account, { name: 'retry' });
      const dest = await destination(f, f.account, 'r');
      const now = new Date(f.clock.now()).toISOString();
      await insertPolicy(f.store.db, f.account, randomUUID(), policy('retry', dest), now);
      await insertEvent(f.store, { account_id: f.account, pool_id: pool, pool_name: 'retry', new_health: 'Unhealthy' });

      // Non-2xx first: the receiver answers 503.
      f.receiver.status = 503;
      assert.equal((await f.service.runOnce()).attempts, 1);
      assert.equal(f.receiver.requests.length, 1);
      // Then down entirely: connection refused.
      await f.receiver.down();
      assert.equal((await f.service.runOnce()).attempts, 0, 'not due before its back-off');
      f.clock.advance(RETRY_BASE_MS - 1);
      assert.equal((await f.service.runOnce()).attempts, 0);
      f.clock.advance(1);
      assert.equal((await f.service.runOnce()).attempts, 1, 'first retry after 4 s');
      f.clock.advance(2 * RETRY_BASE_MS - 1);
      assert.equal((await f.service.runOnce()).attempts, 0, 'second retry waits twice as long');
      f.clock.advance(1);
      assert.equal((await f.service.runOnce()).attempts, 1);
      const [pending] = await listDeliveries(f.store.db, f.account);
      assert.equal(pending?.status, 'pending');
      assert.equal(pending?.attempts, 3);
      assert.match(pending?.last_error ?? '', /ECONNREFUSED/);
      assert.ok((await getDestination(f.store.db, f.account, dest))?.last_failure);

      // Back up: the next due attempt delivers it.
      await f.receiver.reopen();
      f.receiver.status = 200;
      f.clock.advance(4 * RETRY_BASE_MS);
      assert.equal((await f.service.runOnce()).attempts, 1);
      assert.equal(f.receiver.requests.length, 2);
      const [first, second] = f.receiver.requests as [ReceivedRequest, ReceivedRequest];
      assert.equal(first.headers['webhook-id'], second.headers['webhook-id']);
      assert.equal(first.body, second.body, 'the same bytes on every attempt');
      assert.notEqual(first.headers['webhook-timestamp'], second.headers['webhook-timestamp']);
      const [sent] = await listDeliveries(f.store.db, f.account);
      assert.equal(sent?.status, 'sent');
      assert.equal(sent?.attempts, 4);
      assert.equal((await listHistory(f.store.db, f.account, {}, 10, 0)).length, 1);
      assert.ok((await getDestination(f.store.db, f.account, dest))?.last_success);
      // Nothing more to send.
      f.clock.advance(3_600_000);
      assert.equal((await f.service.runOnce()).attempts, 0);
      assert.equal(f.receiver.requests.length, 2);
    } finally {
      await f.close();
    }
  });

  test('retries keep going for 24 h, then the delivery is dead-lettered and logged', async () => {
    const f = await setup();
    try {
      const pool = await insertPool(f.store, f.account, { name: 'dead' });
      const dest = await destination(f, f.account, 'd');
      await insertPolicy(
        f.store.db,
        f.account,
        randomUUID(),
        policy('dead', dest),
        new Date(f.clock.now()).toISOString(),
      );
      await insertEvent(f.store, { account_id: f.account, pool_id: pool, pool_name: 'dead', new_health: 'Unhealthy' });
      f.receiver.status = 500;
      const start = f.clock.now();
      let attempts = 0;
      // Walk the schedule: always due after at most the 1 h cap (+20 % jitter).
      while (f.clock.now() - start < 26 * 3_600_000) {
        attempts += (await f.service.runOnce()).attempts;
        const [row] = await listDeliveries(f.store.db, f.account);
        if (row?.status !== 'pending') break;
        f.clock.set(Date.parse(row.next_attempt_at));
      }
      const [row] = await listDeliveries(f.store.db, f.account);
      assert.equal(row?.status, 'dead');
      assert.ok(f.clock.now() - start >= 24 * 3_600_000, 'retried for at least 24 h');
      assert.ok(attempts >= 20 && attempts <= 40, `a sane number of attempts (${attempts})`);
      assert.equal(f.receiver.requests.length, attempts);
      assert.ok(f.lines.some((line) => line.includes('dead-lettered') && line.includes('"level":"error"')));
    } finally {
      await f.close();
    }
  });
});
