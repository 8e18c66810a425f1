import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openStore } from './database.js';
import { ReusableQuery } from './reusable-query.js';

describe('ReusableQuery (SQLite store)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-reusable-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const insert = new ReusableQuery(['pool_id', 'owner'], (db, v) =>
    db.insertInto('pool_health').values({
      pool_id: v.pool_id as string,
      account_id: 'acct', // a constant stays as compiled
      status: 'Unknown',
      changed_at: null,
      generation: 0,
      lease_owner: v.owner as string,
      lease_until: null,
    }),
  );
  const byOwner = new ReusableQuery(['owner'], (db, v) =>
    db
      .selectFrom('pool_health')
      .select(['pool_id', 'account_id'])
      .where('lease_owner', '=', v.owner as string)
      .orderBy('pool_id'),
  );

  it('runs with each call’s values, on the connection and inside a transaction', async () => {
    const store = await openStore({ data_dir: dir });
    try {
      const first = await insert.run(store.db, { pool_id: 'p1', owner: 'a' });
      assert.equal(first.numAffectedRows, 1n);
      await store.db.transaction().execute(async (trx) => {
        await insert.run(trx, { pool_id: 'p2', owner: 'b' });
        await insert.run(trx, { pool_id: 'p3', owner: 'a' });
      });
      assert.deepEqual((await byOwner.run(store.db, { owner: 'a' })).rows, [
        { pool_id: 'p1', account_id: 'acct' },
        { pool_id: 'p3', account_id: 'acct' },
      ]);
      assert.deepEqual((await byOwner.run(store.db, { owner: 'b' })).rows, [{ pool_id: 'p2', account_id: 'acct' }]);
    } finally {
      await store.close();
    }
  });

  it('refuses a query that does not use one of its names', async () => {
    const store = await openStore({ data_dir: dir });
    try {
      const unused = new ReusableQuery(['pool_id', 'forgotten'], (db, v) =>
        db
          .selectFrom('pool_health')
          .selectAll()
          .where('pool_id', '=', v.pool_id as string),
      );
      await assert.rejects(unused.run(store.db, { pool_id: 'p1', forgotten: 1 }), /forgotten not among the parameters/);
    } finally {
      await store.close();
    }
  });
});
