/**
 * Two real `switchyard serve` processes (spawned CLI) on one throwaway PostgreSQL — the scale-out mode —
 * with one monitored pool of two real local origins and four account-level policies sending to one real
 * webhook receiver. An origin goes down and comes back, and the process that was checking it is stopped
 * in between, so the other one takes over the pool and records the recovery. Proven at the end:
 * - exactly one health event per change (not one per process), also across the hand-over;
 * - exactly one delivery per (alert, policy), each sent once: every webhook-id reaches the receiver once.
 * Runs in the PostgreSQL pass of scripts/run-tests.mjs (SQLite is one process per data_dir by design).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createToken } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/clock.js';
import { openStore, type Store } from '../../src/store/database.js';
import { TestOrigin } from '../health/test-origin.js';
import { type CliProcess, spawnCli } from '../helpers/cli.js';
import { storeOptions, testBackend, testStoreLocation } from '../helpers/store.js';
import { type Receiver, startReceiver, waitFor } from './helpers.js';

const ACCOUNT = 'a11ce0000000000000000000000000a1';
const POLICIES = 4;

test('two serve processes on one PostgreSQL: one event per health change, one delivery per alert', async (t) => {
  if (testBackend() !== 'postgres') {
    t.skip('needs PostgreSQL: runs in the PostgreSQL pass (SWITCHYARD_TEST_DATABASE_URL)');
    return;
  }
  const location = await testStoreLocation();
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-serve2-'));
  const a = await TestOrigin.start();
  const b = await TestOrigin.start();
  const receiver: Receiver = await startReceiver();
  const processes: CliProcess[] = [];
  let store: Store | undefined;
  try {
    const config = (name: string): string => {
      const file = join(dir, `${name}.yaml`);
      writeFileSync(
        file,
        [
          `data_dir: ${JSON.stringify(join(dir, name))}`,
          `database_url: ${JSON.stringify(location.database_url)}`,
          // Instances sharing a database share its secrets key.
          `secrets_key_file: ${JSON.stringify(join(dir, 'secrets.key'))}`,
          `account_id: ${ACCOUNT}`,
          'gateway: { listen: "127.0.0.1:0" }',
          'api: { listen: "127.0.0.1:0" }',
          'log_level: info',
          'networks: { sepolia: { chain_id: 11155111, pools: [shared] } }',
          'pools:',
          '  - name: shared',
          '    origins:',
          `      - { name: a, address: ${JSON.stringify(a.url)} }`,
          `      - { name: b, address: ${JSON.stringify(b.url)} }`,
          '    monitor: { type: jsonrpc, interval: 1, timeout: 1, retries: 0 }',
        ].join('\n'),
      );
      return file;
    };
    const serve = async (name: string): Promise<{ process: CliProcess; api: string }> => {
      const child = spawnCli(['serve', '--config', config(name)]);
      processes.push(child);
      const started = await child.waitForLog((line) => line.msg === 'switchyard started', 60_000);
      return { process: child, api: String(started.api) };
    };
    const first = await serve('one');
    const second = await serve('two');
    store = await openStore(storeOptions(location));
    const db = store.db;
    const token = (await createToken(db, systemClock, { accountId: ACCOUNT, readOnly: false })).token;
    const call = async (api: string, method: string, path: string, body: unknown) => {
      const res = await fetch(`${api}/accounts/${ACCOUNT}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const envelope = (await res.json()) as { success: boolean; result: { id: string }; errors: unknown };
      assert.ok(envelope.success, `${method} ${path}: ${JSON.stringify(envelope.errors)}`);
      return envelope.result;
    };
    const destination = await call(first.api, 'POST', '/alerting/v3/destinations/webhooks', {
      name: 'pager',
      url: receiver.url,
      secret: 'shared-secret',
    });
    for (let i = 0; i < POLICIES; i++) {
      // Through both processes' APIs: either may serve writes.
      await call(i % 2 ? second.api : first.api, 'POST', '/alerting/v3/policies', {
        name: `policy ${i}`,
        alert_type: 'load_balancing_health_alert',
        enabled: true,
        mechanisms: { webhooks: [{ id: destination.id }] },
      });
    }
    receiver.requests.length = 0; // the test message of the destination

    const changes = async () =>
      (await db.selectFrom('health_events').selectAll().orderBy('seq').execute()).map(
        (e) => `${e.event_source} ${e.origin_name ?? e.pool_name} ${e.previous}->${e.new_health}`,
      );
    const originRow = (name: string) =>
      db.selectFrom('origin_health').selectAll().where('origin_name', '=', name).executeTakeFirst();
    const healthy = async (name: string) => (await originRow(name))?.status === 'Healthy';
    const generation = async () => Number((await originRow('a'))?.generation ?? 0);
    /** Waits until `event` is recorded, then until three more rounds ran, so a duplicate would have shown. */
    const settle = async (event: string) => {
      await waitFor(async () => (await changes()).includes(event), `"${event}"`, 30_000);
      const target = (await generation()) + 3;
      await waitFor(async () => (await generation()) >= target, 'three more checks of the pool', 30_000);
    };

    await waitFor(async () => (await healthy('a')) && (await healthy('b')), 'both origins checked Healthy', 30_000);
    await a.down();
    await settle('origin a Healthy->Unhealthy');

    // Stop the process that checks the pool — the one that recorded the change — cleanly, so it gives its
    // lease up; the other takes the pool over at its next round.
    const lease = await db.selectFrom('pool_health').select('lease_owner').executeTakeFirst();
    assert.ok(lease?.lease_owner, 'one process holds the checker lease');
    const recordedBy = [first, second].filter(({ process }) => process.logs.some((l) => l.msg === 'health change'));
    assert.equal(recordedBy.length, 1, 'one process recorded the change');
    const stopped = recordedBy[0] as { process: CliProcess; api: string };
    stopped.process.kill('SIGTERM');
    assert.equal((await stopped.process.waitForExit(30_000)).code, 0);
    await a.up();
    await settle('origin a Unhealthy->Healthy');
    const after = await db.selectFrom('pool_health').select('lease_owner').executeTakeFirst();
    assert.ok(after?.lease_owner && after.lease_owner !== lease.lease_owner, 'the remaining process took over');

    assert.deepEqual(await changes(), ['origin a Healthy->Unhealthy', 'origin a Unhealthy->Healthy']);

    const expected = 2 * POLICIES;
    const deliveries = () => db.selectFrom('notification_deliveries').selectAll().execute();
    await waitFor(
      async () => (await deliveries()).filter((d) => d.status === 'sent').length === expected,
      `${expected} deliveries sent`,
      30_000,
    );
    const rows = await deliveries();
    assert.equal(rows.length, expected, 'one delivery per (alert, policy)');
    assert.ok(
      rows.every((row) => Number(row.attempts) === 1),
      'each sent in one attempt',
    );
    // Two more health rounds: time for a second process to (wrongly) send anything again.
    const target = (await generation()) + 2;
    await waitFor(async () => (await generation()) >= target, 'two more checks', 30_000);
    const ids = receiver.requests.map((request) => String(request.headers['webhook-id']));
    assert.equal(ids.length, expected, 'the receiver got every alert once');
    assert.equal(new Set(ids).size, expected, 'no webhook-id twice');
    assert.deepEqual(new Set(ids), new Set(rows.map((row) => row.message_id)));
    const events = receiver.requests.map((request) => JSON.parse(request.body).alert_event as string);
    assert.deepEqual(
      events.filter((event) => event === 'ALERT_STATE_EVENT_START').length,
      POLICIES,
      'a START per policy',
    );
    for (const child of processes) assert.ok(!child.stderr().includes('shared-secret'), 'no secret in logs');
  } finally {
    for (const child of processes) child.kill('SIGTERM');
    for (const child of processes) await child.waitForExit(30_000).catch(() => child.kill('SIGKILL'));
    await store?.close();
    await receiver.close();
    await a.down();
    await b.down();
    rmSync(dir, { recursive: true, force: true });
    location.cleanup();
  }
});
