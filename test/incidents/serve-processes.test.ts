/**
 * Two real `switchyard serve` processes on one throwaway PostgreSQL, both following the same two anvil
 * nodes with their own chain trackers and incident detectors: head stalls (START and END) and a reorg
 * each give ONE incident and one delivery per policy target, not one per process — the compare-and-set
 * rows of `chain_incidents` (docs/incidents.md), as health events are deduplicated by their state rows.
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
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { type CliProcess, spawnCli } from '../helpers/cli.js';
import { storeOptions, testBackend, testStoreLocation } from '../helpers/store.js';
import { type Receiver, startReceiver, waitFor } from '../notifications/helpers.js';

const ACCOUNT = 'c4a1e000000000000000000000000c4b';

async function rpc<T>(node: AnvilNode, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(node.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: unknown };
  if (body.error !== undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result as T;
}

test('two serve processes on one PostgreSQL: one alert per chain incident', async (t) => {
  if (testBackend() !== 'postgres') {
    t.skip('needs PostgreSQL: runs in the PostgreSQL pass (SWITCHYARD_TEST_DATABASE_URL)');
    return;
  }
  const location = await testStoreLocation();
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-incidents2-'));
  const a = await startTestAnvil({ noMining: true });
  const b = await startTestAnvil({ noMining: true });
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
          `account_id: ${ACCOUNT}`,
          'gateway: { listen: "127.0.0.1:0" }',
          'api: { listen: "127.0.0.1:0" }',
          'log_level: info',
          'networks:',
          '  sepolia:',
          '    chain_id: 11155111',
          '    pools: [pair]',
          '    head_poll_interval: 0.1',
          '    incidents: { head_stall_after: 2, reorg_min_depth: 2 }',
          'pools:',
          '  - name: pair',
          '    origins:',
          `      - { name: a, address: ${JSON.stringify(a.url)} }`,
          `      - { name: b, address: ${JSON.stringify(b.url)} }`,
        ].join('\n'),
      );
      return file;
    };
    const serve = async (name: string): Promise<string> => {
      const child = spawnCli(['serve', '--config', config(name)]);
      processes.push(child);
      const started = await child.waitForLog((line) => line.msg === 'switchyard started', 60_000);
      return String(started.api);
    };
    const api = await serve('one');
    await serve('two');
    store = await openStore(storeOptions(location));
    const db = store.db;
    const token = (await createToken(db, systemClock, { accountId: ACCOUNT, readOnly: false })).token;
    const call = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${api}/accounts/${ACCOUNT}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const envelope = (await res.json()) as { success: boolean; result: { id: string }; errors: unknown };
      assert.ok(envelope.success, `${method} ${path}: ${JSON.stringify(envelope.errors)}`);
      return envelope.result;
    };
    const destination = await call('POST', '/alerting/v3/destinations/webhooks', { name: 'pager', url: receiver.url });
    for (const type of ['switchyard_head_stall_alert', 'switchyard_reorg_alert']) {
      await call('POST', '/alerting/v3/policies', {
        name: type,
        alert_type: type,
        enabled: true,
        mechanisms: { webhooks: [{ id: destination.id }] },
      });
    }
    receiver.requests.length = 0;
    const seen = () => receiver.requests.map((r) => JSON.parse(r.body) as { alert_type: string; alert_event: string });
    const has = (type: string, event: string) => seen().some((x) => x.alert_type === type && x.alert_event === event);

    for (let i = 0; i < 5; i++) await rpc(a, 'evm_mine');
    await waitFor(() => has('switchyard_head_stall_alert', 'ALERT_STATE_EVENT_START'), 'the stall START', 30_000);
    await rpc(a, 'evm_mine');
    await rpc(a, 'evm_mine');
    await waitFor(() => has('switchyard_head_stall_alert', 'ALERT_STATE_EVENT_END'), 'the stall END', 30_000);
    // The head rests at 7: both detectors see a new stall begin there (their trackers hold block 7).
    for (const child of processes) {
      await child.waitForLog(
        (line) => line.msg === 'chain incident started: head_stall' && line.block_number === 7,
        30_000,
      );
    }
    await rpc(a, 'anvil_reorg', [3, []]);
    await waitFor(() => has('switchyard_reorg_alert', 'ALERT_STATE_EVENT_START'), 'the reorg alert', 30_000).catch(
      (err) => {
        for (const child of processes)
          console.error(
            JSON.stringify(child.logs.filter((l) => /reorg|incident|fail|error/i.test(String(l.msg))).slice(-10)),
          );
        throw err;
      },
    );

    // Both processes saw every change: each detector logged the stall and the reorg.
    for (const child of processes) {
      await child.waitForLog((line) => line.msg === 'chain incident: reorg', 30_000);
      assert.ok(child.logs.some((line) => line.msg === 'chain incident started: head_stall'));
    }
    // Time for a duplicate to show: both processes dispatch and send within a second (500 ms polls).
    const before = receiver.requests.length;
    await rpc(a, 'evm_mine'); // one more head, so both detectors have certainly run past the reorg
    await waitFor(
      async () =>
        (await db.selectFrom('notification_deliveries').select('status').execute()).every((d) => d.status === 'sent'),
      'every delivery sent',
      30_000,
    );
    const incidents = await db.selectFrom('chain_incidents').selectAll().execute();
    assert.deepEqual(
      incidents.map((row) => row.kind).sort(),
      ['head_stall', 'head_stall', 'reorg'],
      'one row per incident (the second stall: the head rested at 7 before the reorg)',
    );
    const deliveries = await db.selectFrom('notification_deliveries').selectAll().execute();
    assert.equal(deliveries.length, 4, 'START, END, the second START and the reorg: one delivery each');
    assert.equal(receiver.requests.length, before);
    assert.deepEqual(
      seen().map((x) => `${x.alert_type} ${x.alert_event}`),
      [
        'switchyard_head_stall_alert ALERT_STATE_EVENT_START',
        'switchyard_head_stall_alert ALERT_STATE_EVENT_END',
        'switchyard_head_stall_alert ALERT_STATE_EVENT_START',
        'switchyard_reorg_alert ALERT_STATE_EVENT_START',
      ],
    );
    assert.equal(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size, 4);
  } finally {
    for (const child of processes) child.kill('SIGTERM');
    for (const child of processes) await child.waitForExit(30_000).catch(() => child.kill('SIGKILL'));
    await store?.close();
    await receiver.close();
    await a.stop();
    await b.stop();
    rmSync(dir, { recursive: true, force: true });
    location.cleanup();
  }
});
