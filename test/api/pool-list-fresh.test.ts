// The pools list answers from a memo of decoded pools and their cached JSON (pools/pool-rows.ts,
// api/schemas/pool-view.ts): every change must show in the next listing — writes through the API, the
// bulk PATCH, a delete, a write by another process (straight to the store, bumping `version` as every
// writer does), a row that turns undecodable — and a listing must equal the single-pool answers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ApiFixture, startApiFixture } from './setup.js';

type PoolLite = { id: string; name: string; description: string; notification_email: string; origins: unknown[] };

describe('the pools list after changes', () => {
  let f: ApiFixture;
  let base = '';
  const ids: string[] = [];
  const list = async (query = 'per_page=1000') => {
    const res = await f.call('GET', `${base}?${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body.errors));
    return res.body.result as PoolLite[];
  };
  const byName = (pools: PoolLite[], name: string) => pools.find((pool) => pool.name === name);

  before(async () => {
    f = await startApiFixture();
    base = `/accounts/${f.accountId}/load_balancers/pools`;
    for (let i = 0; i < 5; i++) {
      const res = await f.call('POST', base, {
        body: {
          name: `p${i}`,
          notification_email: `p${i}@example.com`,
          origins: [
            { name: 'a', address: `http://u:secret@127.0.0.1:${1000 + i}/v3/0123456789abcdef0123456789abcdef` },
            { name: 'b', address: `127.0.0.1:${2000 + i}`, header: { 'X-Api-Key': ['k'] } },
          ],
        },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body.errors));
      ids.push((res.body.result as PoolLite).id);
    }
    await list(); // fills the memo
  });
  after(() => f.close());

  test('a listing equals the single-pool answers, twice in a row', async () => {
    for (let round = 0; round < 2; round++) {
      const pools = await list();
      assert.equal(pools.length, 5);
      for (const pool of pools) {
        const one = await f.call('GET', `${base}/${pool.id}`);
        assert.deepEqual(pool, one.body.result);
      }
    }
  });

  test('PATCH, PUT and the bulk PATCH show in the next listing', async () => {
    await f.call('PATCH', `${base}/${ids[0]}`, { body: { description: 'patched' } });
    assert.equal(byName(await list(), 'p0')?.description, 'patched');
    const put = await f.call('PUT', `${base}/${ids[1]}`, {
      body: { name: 'p1-renamed', origins: [{ name: 'c', address: '127.0.0.1:3000' }] },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body.errors));
    const afterPut = await list();
    assert.equal(byName(afterPut, 'p1'), undefined);
    assert.deepEqual(byName(afterPut, 'p1-renamed')?.origins.length, 1);
    await f.call('PATCH', base, { body: { notification_email: '' } });
    assert.deepEqual(
      (await list()).map((pool) => pool.notification_email),
      ['', '', '', '', ''],
    );
  });

  test('a delete shows in the next listing, and pages still line up', async () => {
    await f.call('DELETE', `${base}/${ids[4]}`);
    const pools = await list();
    assert.equal(byName(pools, 'p4'), undefined);
    assert.deepEqual(
      (await list('per_page=2&page=2')).map((pool) => pool.name),
      pools.slice(2, 4).map((pool) => pool.name),
    );
  });

  test('a write by another process (a new version in the store) shows in the next listing', async () => {
    await f.app.store.db
      .updateTable('pools')
      .set((eb) => ({ notification_email: 'behind@example.com', version: eb('version', '+', 1) }))
      .where('id', '=', ids[2] as string)
      .execute();
    assert.equal(byName(await list(), 'p2')?.notification_email, 'behind@example.com');
  });

  test('a row whose settings turn undecodable (with a new version) is left out, the rest still listed', async () => {
    await f.app.store.db
      .updateTable('pools')
      .set((eb) => ({ settings: '{}', version: eb('version', '+', 1) }))
      .where('id', '=', ids[3] as string)
      .execute();
    const pools = await list();
    assert.equal(byName(pools, 'p3'), undefined);
    assert.ok(byName(pools, 'p2') !== undefined);
  });
});
