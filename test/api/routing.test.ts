// The gateway routes through the store's pools: a pool created or changed through the API takes effect
// without a restart: in this process at once, and by polling for writes made elsewhere.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/clock.js';
import { silentLogger } from '../../src/log.js';
import { poolFieldsFromConfig } from '../../src/model/pool-defaults.js';
import { createPool } from '../../src/pools/pool-queries.js';
import { StorePoolDirectory } from '../../src/pools/store-directory.js';
import { openStore } from '../../src/store/database.js';
import { rpc, startHttpServer, type TestServer } from '../helpers/http.js';
import { openTestSecrets } from '../helpers/store.js';
import { type ApiFixture, startApiFixture } from './setup.js';

describe('pools from the store drive routing', () => {
  let f: ApiFixture;
  let origin: TestServer;
  before(async () => {
    origin = await startHttpServer((_req, res, body) => {
      const { id } = JSON.parse(body) as { id: unknown };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x10' }));
    });
    f = await startApiFixture({ networks: { sepolia: { chain_id: 11155111, pools: ['dyn'] } } });
  });
  after(async () => {
    await f.close();
    await origin.close();
  });

  test('503 until the pool exists; created through the API it serves at once; disabled it stops', async () => {
    const url = f.app.rpcUrl('sepolia');
    // eth_blockNumber: an answer the gateway never caches, so each call is routed afresh.
    assert.equal((await rpc(url, 'eth_blockNumber')).status, 503);
    const pool = await f.sdk.loadBalancers.pools.create({
      account_id: f.accountId,
      name: 'dyn',
      origins: [{ name: 'local', address: origin.url }],
    });
    assert.deepEqual(pool.networks, ['sepolia']);
    const metrics = await (await fetch(`${f.app.apiUrl.replace(/\/client\/v4$/, '')}/metrics`)).text();
    assert.match(metrics, /^switchyard_pools 1$/m, 'the snapshot gauge counts the new pool');
    const served = await rpc(url, 'eth_blockNumber');
    assert.equal(served.status, 200);
    assert.equal(served.answer.result, '0x10');
    await f.sdk.loadBalancers.pools.edit(pool.id as string, { account_id: f.accountId, enabled: false });
    assert.equal((await rpc(url, 'eth_blockNumber')).status, 503);
  });

  test('a write the directory was not told about (another process) is seen by polling within a bound', async () => {
    // A second directory over the same database; the write below bypasses it (no refresh() call), as a
    // write by the CLI or another serve process would. On PostgreSQL it also goes through another pool
    // of connections; on SQLite a second connection in this one thread could block on its own lock.
    const other =
      f.app.store.dialect === 'postgres'
        ? await openStore({ data_dir: f.app.config.data_dir, database_url: f.app.config.database_url })
        : undefined;
    const writer = other ?? f.app.store;
    const writerSecrets = other === undefined ? f.app.secrets : await openTestSecrets(other, f.app.config.data_dir);
    const directory = await StorePoolDirectory.start({
      store: f.app.store,
      secrets: f.app.secrets,
      accountId: f.accountId,
      logger: silentLogger,
      pollMs: 50,
    });
    try {
      let changes = 0;
      directory.onChange(() => {
        changes += 1;
      });
      assert.equal(directory.poolByName('written-elsewhere'), undefined);
      const fields = poolFieldsFromConfig(
        { name: 'written-elsewhere', origins: [{ name: 'x', address: 'h:1' }] },
        null,
      );
      await createPool(writer.db, writerSecrets, systemClock, f.accountId, fields);
      const deadline = Date.now() + 5000;
      while (directory.poolByName('written-elsewhere') === undefined && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.ok(directory.poolByName('written-elsewhere'), 'seen without an in-process refresh');
      assert.ok(changes >= 1);
    } finally {
      directory.close();
      await other?.close();
    }
  });
});
