/**
 * The ledger's compare-and-sets on a real store (both backends): a record is inserted once; a state
 * change applies only from the status and version it names, so two processes deciding the same change
 * write it — and its event — once; orphaned records are taken over once, never from a live owner.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openTestStore } from '../../test/helpers/store.js';
import {
  applyChanges,
  claimOrphans,
  followedOf,
  heartbeat,
  insertRecords,
  type NewRecord,
  removeInstance,
} from './queries.js';

const AT = '2026-05-10T12:00:00.000Z';

function newRecord(n: number, owner: string): NewRecord {
  return {
    network: 'sepolia',
    hash: `0x${n.toString(16).padStart(64, '0')}`,
    accountId: 'a'.repeat(32),
    from: `0x${'b'.repeat(40)}`,
    nonce: n,
    keyId: null,
    client: '127.0.0.1',
    origins: ['p/o0'],
    raw: '0x00',
    owner,
    at: AT,
  };
}

describe('ledger queries', () => {
  let handle: Awaited<ReturnType<typeof openTestStore>>;
  before(async () => {
    handle = await openTestStore();
  });
  after(async () => {
    await handle.close();
  });

  it('inserts a record once, with one pending event', async () => {
    const db = handle.store.db;
    const first = await insertRecords(db, [newRecord(1, 'one')]);
    const again = await insertRecords(db, [newRecord(1, 'two'), newRecord(2, 'two')]);
    assert.equal(first.size, 1);
    assert.equal(again.size, 1, 'only the new one');
    const owner = await db.selectFrom('ledger_transactions').select('owner').where('nonce', '=', 1).executeTakeFirst();
    assert.equal(owner?.owner, 'one');
    const events = await db.selectFrom('ledger_events').select('hash').execute();
    assert.equal(events.length, 2);
  });

  it('applies a change only from the status and version it names: the same change twice is written once', async () => {
    const db = handle.store.db;
    const row = await db.selectFrom('ledger_transactions').selectAll().where('nonce', '=', 1).executeTakeFirstOrThrow();
    const record = followedOf(row, 0);
    const change = {
      record,
      from: { status: 'pending' as const, version: 0 },
      to: 'included' as const,
      event: 'included' as const,
      inclusion: { number: 7, hash: `0x${'7'.repeat(64)}`, index: 2 },
      at: AT,
    };
    assert.deepEqual(await applyChanges(db, [change]), [true]);
    assert.deepEqual(await applyChanges(db, [change]), [false], 'a second process deciding the same');
    const stale = { ...change, to: 'dropped' as const, event: 'dropped' as const, inclusion: undefined };
    assert.deepEqual(await applyChanges(db, [stale]), [false], 'from a status the row left');
    // Back to pending (a reorg): the status is the first change's `from` again, the version is not.
    const reorged = {
      ...change,
      from: { status: 'included' as const, version: 1 },
      to: 'pending' as const,
      event: 'reorged' as const,
      inclusion: null,
    };
    assert.deepEqual(await applyChanges(db, [reorged]), [true]);
    assert.deepEqual(await applyChanges(db, [change]), [false], 'pending again, but not the version it named');
    assert.deepEqual(await applyChanges(db, [{ ...change, from: { status: 'pending' as const, version: 2 } }]), [true]);
    const included = await db
      .selectFrom('ledger_events')
      .select('status')
      .where('hash', '=', record.hash)
      .where('status', '=', 'included')
      .execute();
    assert.equal(included.length, 2, 'the first inclusion and the one after the reorg');
    const after = await db
      .selectFrom('ledger_transactions')
      .selectAll()
      .where('hash', '=', record.hash)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      [after.status, Number(after.version), Number(after.block_number), after.transaction_index],
      ['included', 3, 7, 2],
    );
  });

  it('takes over the records of an owner without a heartbeat, once; never a live owner’s', async () => {
    const db = handle.store.db;
    await insertRecords(db, [newRecord(10, 'alive'), newRecord(11, 'gone')]);
    await heartbeat(db, 'alive', AT);
    await heartbeat(db, 'gone', AT);
    await heartbeat(db, 'me', AT);
    // The owners of the records above are alive too.
    await heartbeat(db, 'one', AT);
    await heartbeat(db, 'two', AT);
    assert.deepEqual(
      (await claimOrphans(db, 'me')).map((row) => row.hash),
      [],
    );
    await removeInstance(db, 'gone');
    const taken = (await claimOrphans(db, 'me')).map((row) => Number(row.nonce));
    assert.deepEqual(taken, [11]);
    assert.deepEqual(await claimOrphans(db, 'someone-else'), [], 'taken once');
    const owners = await db.selectFrom('ledger_transactions').select(['nonce', 'owner']).orderBy('nonce').execute();
    assert.deepEqual(
      owners.filter((row) => Number(row.nonce) >= 10).map((row) => row.owner),
      ['alive', 'me'],
    );
  });
});
