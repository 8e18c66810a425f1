// The bulk PATCH is atomic per page: when the database refuses the change of one pool on the page (here a
// test trigger, standing in for a constraint or a lost connection), no pool of that page changes, the
// answer is a 500 envelope, and the other pages are unaffected.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type ApiFixture, startApiFixture } from './setup.js';

describe('bulk PATCH atomicity', () => {
  let f: ApiFixture;
  let base = '';
  const emails = async () =>
    Object.fromEntries(
      (await f.app.store.db.selectFrom('pools').select(['name', 'notification_email']).execute()).map((row) => [
        row.name,
        row.notification_email,
      ]),
    );

  before(async () => {
    f = await startApiFixture();
    base = `/accounts/${f.accountId}/load_balancers/pools`;
    for (const name of ['aaa', 'boom', 'zzz']) {
      const res = await f.call('POST', base, {
        body: { name, origins: [{ name: 'o', address: 'h:1' }], notification_email: `${name}@example.com` },
      });
      assert.equal(res.status, 200);
    }
    const db = f.app.store.db;
    if (f.app.store.dialect === 'postgres') {
      await sql`CREATE FUNCTION refuse_boom() RETURNS trigger AS $$
        BEGIN IF NEW.name = 'boom' THEN RAISE EXCEPTION 'refused by test trigger'; END IF; RETURN NEW; END
        $$ LANGUAGE plpgsql`.execute(db);
      await sql`CREATE TRIGGER refuse_boom BEFORE UPDATE ON pools FOR EACH ROW EXECUTE FUNCTION refuse_boom()`.execute(
        db,
      );
    } else {
      await sql`CREATE TRIGGER refuse_boom BEFORE UPDATE ON pools WHEN NEW.name = 'boom'
        BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END`.execute(db);
    }
  });
  after(() => f.close());

  test('a page the database refuses in part changes not at all; other pages still work', async () => {
    const failed = await f.call('PATCH', `${base}?per_page=2`, { body: { notification_email: '' } });
    assert.equal(failed.status, 500);
    assert.equal(failed.body.errors[0]?.code, 10001);
    assert.doesNotMatch(failed.body.errors[0]?.message ?? '', /trigger/, 'database details stay in the log');
    assert.deepEqual(await emails(), {
      aaa: 'aaa@example.com',
      boom: 'boom@example.com',
      zzz: 'zzz@example.com',
    });
    const second = await f.call('PATCH', `${base}?per_page=2&page=2`, { body: { notification_email: '' } });
    assert.equal(second.status, 200);
    assert.deepEqual(
      (second.body.result as { name: string }[]).map((pool) => pool.name),
      ['zzz'],
    );
    assert.deepEqual(await emails(), { aaa: 'aaa@example.com', boom: 'boom@example.com', zzz: '' });
  });
});
