/**
 * Durability across `kill -9`: a spawned `switchyard serve` claims a webhook delivery and is killed while
 * the receiver is still holding the request. After a restart the delivery is sent again right away (the
 * dead process's lease is dropped on the embedded store) with the same webhook-id and the same bytes,
 * and is then marked sent — at-least-once, nothing lost.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { listDeliveries } from '../../src/notifications/queries/outbox.js';
import { openStore } from '../../src/store/database.js';
import { type CliProcess, spawnCli } from '../helpers/cli.js';
import { openTestSecrets } from '../helpers/store.js';
import { insertAccount, insertEvent, insertPool, insertWebhookPolicy, startReceiver, waitFor } from './helpers.js';

test('kill -9 with a delivery in flight → delivered after restart with the same webhook-id', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-crash-'));
  const receiver = await startReceiver();
  const store = await openStore({ data_dir: dataDir });
  let serve: CliProcess | undefined;
  try {
    const account = await insertAccount(store);
    const pool = await insertPool(store, account, { name: 'crash' });
    const secrets = await openTestSecrets(store, dataDir);
    await insertWebhookPolicy(store, secrets, account, { name: 'crash', url: receiver.url, secret: 's3cret' });
    const config = join(dataDir, 'switchyard.yaml');
    writeFileSync(
      config,
      [
        `data_dir: ${JSON.stringify(dataDir)}`,
        `account_id: ${account}`,
        'gateway: { listen: "127.0.0.1:0" }',
        'api: { listen: "127.0.0.1:0" }',
        'log_level: info',
      ].join('\n'),
    );
    const start = async (): Promise<CliProcess> => {
      const child = spawnCli(['serve', '--config', config]);
      await child.waitForLog((line) => line.msg === 'switchyard started', 60_000);
      return child;
    };

    serve = await start();
    receiver.hold = true;
    await insertEvent(store, { account_id: account, pool_id: pool, pool_name: 'crash', new_health: 'Unhealthy' });
    await waitFor(() => receiver.requests.length === 1, 'the first attempt to reach the receiver', 15_000);
    const [claimed] = await listDeliveries(store.db, account);
    assert.equal(claimed?.status, 'pending');
    assert.ok(claimed?.locked_by, 'the delivery is claimed by the running process');

    serve.kill('SIGKILL');
    await serve.waitForExit();
    receiver.hold = false;
    serve = await start();
    await waitFor(() => receiver.requests.length === 2, 'the redelivery after restart', 15_000);
    const [first, second] = receiver.requests;
    assert.equal(second?.headers['webhook-id'], first?.headers['webhook-id']);
    assert.equal(second?.body, first?.body);
    assert.equal(JSON.parse(second?.body ?? '{}').alert_event, 'ALERT_STATE_EVENT_START');
    const sent = await waitFor(async () => {
      const [row] = await listDeliveries(store.db, account);
      return row?.status === 'sent' ? row : undefined;
    }, 'the delivery to be marked sent');
    assert.equal(sent.attempts, 1, 'the killed attempt never recorded an outcome');
    // The row is marked sent before the log line crosses the pipe: wait for the line, bounded.
    await serve.waitForLog((line) => line.msg === 'notification sent', 10_000);
    assert.ok(!serve.stderr().includes('s3cret'));
  } finally {
    serve?.kill('SIGTERM');
    await serve?.waitForExit().catch(() => serve?.kill('SIGKILL'));
    await store.close();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
