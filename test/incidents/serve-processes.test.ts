/**
 * Two real `switchyard serve` processes on one throwaway PostgreSQL, both following the same two anvil
 * nodes with their own chain trackers and incident detectors: head stalls (START and END) and a reorg
 * each give ONE incident and one delivery per policy target, not one per process — the compare-and-set
 * rows of `chain_incidents` (docs/incidents.md), as health events are deduplicated by their state rows.
 * The second process runs `gateway.workers: 2`, so its detector is the control process's, and each
 * process's own log shows it saw every incident.
 * Runs in the PostgreSQL pass of scripts/run-tests.mjs (SQLite is one process per data_dir by design).
 *
 * Only `a` mines; it is trusted (`verify_anchor.origins`), since a reorg needs a backer or a trusted origin
 * and `b`, resting at its own genesis, backs nothing.
 *
 * The chain moves (a pacer, every 400 ms) from before the processes start until the scenario wants a
 * stall at H: on a loaded machine the setup alone takes over head_stall_after (2 s). The incidents are
 * picked out by block number (stall at H, stall at H + 2, the reorg from H); were the machine so slow
 * that the chain rested 2 s even so, that other stall is reported and may be there, but no incident
 * has two rows and no alert two deliveries or two requests.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createToken } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/clock.js';
import { openStore, type Store } from '../../src/store/database.js';
import { startTestAnvil } from '../helpers/anvil.js';
import { type CliProcess, spawnCli } from '../helpers/cli.js';
import { storeOptions, testBackend, testStoreLocation } from '../helpers/store.js';
import { type Receiver, startReceiver, waitFor } from '../notifications/helpers.js';
import { describeRun, height, type Pacer, rpc, startPacer } from './helpers.js';

const ACCOUNT = 'c4a1e000000000000000000000000c4b';

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
  let pacer: Pacer | undefined = startPacer([a]);
  try {
    const config = (name: string, gateway: string): string => {
      const file = join(dir, `${name}.yaml`);
      writeFileSync(
        file,
        [
          `data_dir: ${JSON.stringify(join(dir, name))}`,
          `database_url: ${JSON.stringify(location.database_url)}`,
          // Instances sharing a database share its secrets key.
          `secrets_key_file: ${JSON.stringify(join(dir, 'secrets.key'))}`,
          `account_id: ${ACCOUNT}`,
          `gateway: { listen: "127.0.0.1:0"${gateway} }`,
          'api: { listen: "127.0.0.1:0" }',
          'log_level: info',
          'networks:',
          '  sepolia:',
          '    chain_id: 11155111',
          '    pools: [pair]',
          '    head_poll_interval: 0.1',
          '    incidents: { head_stall_after: 2, reorg_min_depth: 2 }',
          // `a` is the operator's own node: its reorg is adopted on its word. `b` is a chain of its own
          // resting at its genesis, which can back nothing (SPEC §20: no single origin moves the chain).
          '    verify_anchor: { origins: [pair/a] }',
          'pools:',
          '  - name: pair',
          '    origins:',
          `      - { name: a, address: ${JSON.stringify(a.url)} }`,
          `      - { name: b, address: ${JSON.stringify(b.url)} }`,
        ].join('\n'),
      );
      return file;
    };
    const serve = async (name: string, gateway = ''): Promise<string> => {
      const child = spawnCli(['serve', '--config', config(name, gateway)]);
      processes.push(child);
      const started = await child.waitForLog((line) => line.msg === 'switchyard started', 60_000);
      return String(started.api);
    };
    const api = await serve('one');
    // The second runs workers: its tracker and detector are the control process's (docs/incidents.md).
    await serve('two', ', workers: 2');
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
    interface Seen {
      id: string;
      alert_type: string;
      alert_event: string;
      alert_correlation_id: string;
      data: { block_number?: number };
    }
    const seen = (): Seen[] =>
      receiver.requests.map((r) => ({ ...(JSON.parse(r.body) as Seen), id: String(r.headers['webhook-id']) }));
    const alert = (type: string, event: string, block: number) =>
      seen().find((x) => x.alert_type === type && x.alert_event === event && x.data.block_number === block);

    await pacer.stop();
    pacer = undefined;
    const rest = await height(a);
    const start = await waitFor(
      () => alert('switchyard_head_stall_alert', 'ALERT_STATE_EVENT_START', rest),
      `the stall START at ${rest}`,
      30_000,
    );
    await rpc(a, 'evm_mine');
    await rpc(a, 'evm_mine');
    const end = await waitFor(
      () => alert('switchyard_head_stall_alert', 'ALERT_STATE_EVENT_END', rest + 2),
      'the stall END',
      30_000,
    );
    assert.equal(end.alert_correlation_id, start.alert_correlation_id);
    // The head rests at H + 2: both detectors see a new stall begin there (their trackers hold it).
    for (const child of processes) {
      await child.waitForLog(
        (line) => line.msg === 'chain incident started: head_stall' && line.block_number === rest + 2,
        30_000,
      );
    }
    await rpc(a, 'anvil_reorg', [3, []]);
    const reorg = await waitFor(
      () => alert('switchyard_reorg_alert', 'ALERT_STATE_EVENT_START', rest),
      'the reorg alert',
      30_000,
    );

    // Both processes saw every change: each detector logged the stall and the reorg.
    for (const child of processes) {
      await child.waitForLog((line) => line.msg === 'chain incident: reorg', 30_000);
      assert.ok(child.logs.some((line) => line.msg === 'chain incident started: head_stall'));
    }
    const second = await waitFor(
      () => alert('switchyard_head_stall_alert', 'ALERT_STATE_EVENT_START', rest + 2),
      `the second stall START at ${rest + 2}`,
      30_000,
    );
    // Time for a duplicate to show: both processes dispatch and send within a second (500 ms polls).
    await rpc(a, 'evm_mine'); // one more head, so both detectors have certainly run past the reorg
    await waitFor(
      async () =>
        (await db.selectFrom('notification_deliveries').select('status').execute()).every((d) => d.status === 'sent'),
      'every delivery sent',
      30_000,
    );
    const incidents = (await db.selectFrom('chain_incidents').selectAll().execute()).map((row) => ({
      ...row,
      block: (JSON.parse(row.data) as { block_number?: number }).block_number,
    }));
    const rowOf = (kind: string, block: number) => incidents.filter((row) => row.kind === kind && row.block === block);
    assert.deepEqual(
      rowOf('head_stall', rest).map((row) => [row.id, row.status]),
      [[start.alert_correlation_id, 'closed']],
      'the stall at H: one row, closed',
    );
    assert.deepEqual(
      rowOf('head_stall', rest + 2).map((row) => [row.id, row.status]),
      [[second.alert_correlation_id, 'open']],
      'the stall at H + 2 (the head rested there before the reorg): one row, open',
    );
    assert.deepEqual(
      rowOf('reorg', rest).map((row) => row.id),
      [reorg.alert_correlation_id],
      'the reorg: one row',
    );
    const ours = new Set([start.alert_correlation_id, second.alert_correlation_id, reorg.alert_correlation_id]);
    for (const other of incidents.filter((row) => !ours.has(row.id))) {
      assert.equal(other.kind, 'head_stall', 'another incident can only be a head stall');
      assert.ok(other.block !== undefined && other.block < rest, 'one that began before the chain rested at H');
      t.diagnostic(`another head stall (the chain rested over 2 s during the setup) at ${other.block}`);
    }
    assert.equal(
      new Set(incidents.map((row) => `${row.kind} ${row.block}`)).size,
      incidents.length,
      'no incident recorded twice',
    );
    const deliveries = await db.selectFrom('notification_deliveries').selectAll().execute();
    const deliveriesOf = (id: string, event: 'start' | 'end') =>
      deliveries.filter((d) => d.dedupe_key.startsWith(`incident:${id}:${event}:`)).length;
    assert.deepEqual(
      [
        deliveriesOf(start.alert_correlation_id, 'start'),
        deliveriesOf(start.alert_correlation_id, 'end'),
        deliveriesOf(second.alert_correlation_id, 'start'),
        deliveriesOf(reorg.alert_correlation_id, 'start'),
      ],
      [1, 1, 1, 1],
      'START, END, the second START and the reorg: one delivery each',
    );
    assert.equal(
      new Set(deliveries.map((d) => d.message_id)).size,
      deliveries.length,
      'one delivery per alert, whichever process dispatched it',
    );
    const requests = seen();
    assert.equal(new Set(requests.map((x) => x.id)).size, requests.length, 'each alert sent once');
    assert.equal(requests.length, deliveries.length, 'a request per delivery, no more');
  } catch (err) {
    console.error(describeRun(processes, receiver));
    throw err;
  } finally {
    await pacer?.stop();
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
