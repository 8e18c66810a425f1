// A pool or monitor row whose `settings` cannot be decoded (hand edit, bad restore) never takes the process
// down: the routing snapshot and the health monitor skip it and log it, lists leave it out, a read of it is
// a logged 500, it can be deleted, and the other pools keep routing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/log.js';
import { rpc, startHttpServer, type TestServer } from '../helpers/http.js';
import { type ApiFixture, startApiFixture } from './setup.js';

describe('undecodable pool and monitor rows', () => {
  let f: ApiFixture;
  let origin: TestServer;
  const logs: Record<string, unknown>[] = [];
  const crashes: unknown[] = [];
  const onCrash = (err: unknown) => crashes.push(err);
  let base = '';
  const bad: Record<string, string> = {};

  before(async () => {
    process.on('unhandledRejection', onCrash);
    process.on('uncaughtException', onCrash);
    origin = await startHttpServer((_req, res, body) => {
      const { id } = JSON.parse(body) as { id: unknown };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x10' }));
    });
    const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line)) });
    f = await startApiFixture({ networks: { sepolia: { chain_id: 11155111, pools: ['good'] } } }, { logger });
    base = `/accounts/${f.accountId}/load_balancers/pools`;
    const good = await f.call('POST', base, { body: { name: 'good', origins: [{ name: 'o', address: origin.url }] } });
    assert.equal(good.status, 200);
    // Rows written behind the API's back, as a hand edit or a bad restore would leave them.
    for (const [name, settings] of [
      ['empty-object', '{}'],
      ['not-json', 'not json'],
      ['wrong-types', '{"origins": "node-a"}'],
    ] as const) {
      const id = `${name.length.toString(16).padStart(2, '0')}${'c'.repeat(30)}`;
      bad[name] = id;
      await f.app.store.db
        .insertInto('pools')
        .values({
          id,
          account_id: f.accountId,
          name,
          notification_email: 'legacy@example.com',
          monitor_id: null,
          enabled: 1,
          settings,
          created_on: '2024-01-01T00:00:00.000Z',
          modified_on: '2024-01-01T00:00:00.000Z',
        })
        .execute();
    }
    await f.app.store.db
      .insertInto('monitors')
      .values({
        id: 'd'.repeat(32),
        account_id: f.accountId,
        settings: '[1, 2',
        created_on: '2024-01-01T00:00:00.000Z',
        modified_on: '2024-01-01T00:00:00.000Z',
      })
      .execute();
    // An API write refreshes the routing snapshot (and with it the health monitor) at once.
    assert.equal(
      (await f.call('POST', base, { body: { name: 'trigger', origins: [{ name: 'o', address: 'h:1' }] } })).status,
      200,
    );
  });
  after(async () => {
    await f.close();
    await origin.close();
    process.off('unhandledRejection', onCrash);
    process.off('uncaughtException', onCrash);
  });

  test('the routing snapshot skips them with a log line; the good pool keeps routing', async () => {
    const skipped = logs.filter(
      (line) => line.msg === 'pool directory: skipping a pool whose stored settings cannot be read',
    );
    // Logged at each reload that sees them: the 250 ms poll may reload between the inserts above.
    const ids = [...new Set(skipped.map((line) => line.pool_id))];
    assert.deepEqual(ids.sort(), Object.values(bad).sort(), JSON.stringify(skipped));
    assert.ok(skipped.every((line) => typeof line.reason === 'string' && line.reason !== ''));
    const answer = await rpc(f.app.rpcUrl('sepolia'), 'eth_blockNumber');
    assert.equal(answer.status, 200);
    assert.equal(answer.answer.result, '0x10');
  });

  test('lists leave them out and log them; total_count still counts them so pages line up', async () => {
    const list = await f.call('GET', `${base}?per_page=10`);
    assert.equal(list.status, 200);
    assert.deepEqual(
      (list.body.result as { name: string }[]).map((pool) => pool.name),
      ['good', 'trigger'],
    );
    assert.equal(list.body.result_info?.total_count, 5);
    assert.ok(logs.some((line) => line.msg === 'pools: leaving out a pool whose stored settings cannot be read'));
    const monitors = await f.call('GET', `/accounts/${f.accountId}/load_balancers/monitors`);
    assert.equal(monitors.status, 200);
    assert.deepEqual(monitors.body.result, []);
    assert.equal(monitors.body.result_info?.total_count, 1);
  });

  test('the migration status still reads them (their legacy address counts)', async () => {
    const status = await f.call('GET', `/accounts/${f.accountId}/load_balancers/notification_migration`);
    assert.equal(status.status, 200, JSON.stringify(status.body));
    const result = status.body.result as { complete: boolean; addresses: string[] };
    assert.equal(result.complete, false);
    assert.deepEqual(result.addresses, ['legacy@example.com']);
  });

  test('bulk PATCH clears them too (it decides on the email column) and answers for the rest', async () => {
    const res = await f.call('PATCH', base, { body: { notification_email: '' } });
    assert.equal(res.status, 200);
    assert.deepEqual(
      (res.body.result as { name: string }[]).map((pool) => pool.name),
      ['good', 'trigger'],
    );
    const rows = await f.app.store.db.selectFrom('pools').select(['name', 'notification_email']).execute();
    assert.ok(
      rows.every((row) => row.notification_email === ''),
      JSON.stringify(rows),
    );
  });

  test('reading one is a logged 500 / 10001 without details; deleting it works', async () => {
    for (const path of [
      `${base}/${bad['not-json']}`,
      `/accounts/${f.accountId}/load_balancers/monitors/${'d'.repeat(32)}`,
    ]) {
      const res = await f.call('GET', path);
      assert.equal(res.status, 500, path);
      assert.equal(res.body.errors[0]?.code, 10001);
      assert.doesNotMatch(res.body.errors[0]?.message ?? '', /settings|JSON/);
    }
    assert.ok(logs.some((line) => line.msg === 'api handler failed'));
    for (const id of Object.values(bad)) {
      const res = await f.call('DELETE', `${base}/${id}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
    const monitor = await f.call('DELETE', `/accounts/${f.accountId}/load_balancers/monitors/${'d'.repeat(32)}`);
    assert.equal(monitor.status, 200);
    assert.equal((await f.call('GET', base)).body.result_info?.total_count, 2);
  });

  test('nothing crashed: no unhandled rejection or uncaught exception', () => {
    assert.deepEqual(crashes, []);
  });
});
