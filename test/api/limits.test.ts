/**
 * Per-account limits (SPEC §8 "Probe budget"): `limits.max_origins_per_pool`, `limits.max_pools_per_account`
 * and `limits.probes_per_second` (Σ enabled origins × (retries + 1) ÷ interval over enabled monitored pools)
 * on pool create / put / patch and on monitor changes; each refusal is 400 / 1002 and changes nothing (read
 * back); parallel creates never both slip under a limit; an account already over a limit may still make
 * changes that do not make it worse; limits are per account; config pools are checked when the config loads.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/clock.js';
import { buildConfig } from '../../src/config/load.js';
import { POOL_DEFAULTS } from '../../src/model/pool-defaults.js';
import { createPool } from '../../src/pools/pool-queries.js';
import { type ApiFixture, OTHER_ACCOUNT, startApiFixture } from './setup.js';

const LIMITS = { probes_per_second: 10, max_pools_per_account: 4, max_origins_per_pool: 4 };

/**
 * Origins no probe reaches: a name under `.invalid` (RFC 6761) passes the outbound policy for every
 * account (the second account may not use loopback), and its probes fail without leaving the machine.
 */
function origins(n: number, enabled = true) {
  return Array.from({ length: n }, (_, i) => ({ name: `o${i}`, address: `origin-${i}.invalid:8545`, enabled }));
}

describe('per-account limits', () => {
  let f: ApiFixture;
  let base: string;
  const monitors = { slow: '', fast: '' };

  const call = async (method: string, path: string, body?: unknown, token?: string) =>
    f.call(method, path, { ...(body === undefined ? {} : { body }), ...(token === undefined ? {} : { token }) });
  const pools = async (account = f.accountId, token?: string) => {
    const res = await call('GET', `/accounts/${account}/load_balancers/pools?per_page=100`, undefined, token);
    return res.body.result as { id: string; name: string; enabled: boolean; origins: unknown[] }[];
  };
  const expect400 = (res: { status: number; body: { errors: { code: number; message: string }[] } }, re: RegExp) => {
    assert.equal(res.status, 400, JSON.stringify(res.body.errors));
    assert.equal(res.body.errors[0]?.code, 1002);
    assert.match(res.body.errors[0]?.message ?? '', re);
  };
  const deleteAll = async () => {
    for (const pool of await pools()) await call('DELETE', `${base}/load_balancers/pools/${pool.id}`);
  };

  before(async () => {
    f = await startApiFixture({ limits: LIMITS });
    base = `/accounts/${f.accountId}`;
    // slow: 10 s interval, 1 retry → 0.2 requests/s per origin; fast: 1 s, 4 retries → 5 per origin.
    const slow = await call('POST', `${base}/load_balancers/monitors`, { interval: 10, retries: 1 });
    const fast = await call('POST', `${base}/load_balancers/monitors`, { interval: 1, retries: 4 });
    monitors.slow = (slow.body.result as { id: string }).id;
    monitors.fast = (fast.body.result as { id: string }).id;
  });
  after(() => f.close());

  test('max_origins_per_pool: a pool with more origins is refused on create, put and patch', async () => {
    await deleteAll();
    const created = await call('POST', `${base}/load_balancers/pools`, { name: 'four', origins: origins(4) });
    assert.equal(created.status, 200);
    const id = (created.body.result as { id: string }).id;
    const five = await call('POST', `${base}/load_balancers/pools`, { name: 'five', origins: origins(5) });
    expect400(
      five,
      /^origins: a pool may have at most 4 origins \(limits\.max_origins_per_pool\); this one would have 5$/,
    );
    const before = await call('GET', `${base}/load_balancers/pools/${id}`);
    expect400(
      await call('PUT', `${base}/load_balancers/pools/${id}`, { name: 'four', origins: origins(5) }),
      /limits\.max_origins_per_pool/,
    );
    expect400(await call('PATCH', `${base}/load_balancers/pools/${id}`, { origins: origins(6) }), /at most 4/);
    assert.deepEqual((await call('GET', `${base}/load_balancers/pools/${id}`)).body.result, before.body.result);
    assert.deepEqual(
      (await pools()).map((p) => p.name),
      ['four'],
    );
  });

  test('probes_per_second: the change that would exceed it is refused, saying by how much', async () => {
    await deleteAll();
    // 4 origins × 2 ÷ 10 = 0.8 requests/s.
    const a = await call('POST', `${base}/load_balancers/pools`, {
      name: 'a',
      origins: origins(4),
      monitor: monitors.slow,
    });
    assert.equal(a.status, 200);
    // + 2 origins × 5 ÷ 1 = 10 → 10.8 > 10.
    const b = await call('POST', `${base}/load_balancers/pools`, {
      name: 'b',
      origins: origins(2),
      monitor: monitors.fast,
    });
    expect400(
      b,
      new RegExp(
        `^this change would make account ${f.accountId} probe 10\\.8 requests/s, over limits\\.probes_per_second 10 by 0\\.8 `,
      ),
    );
    assert.deepEqual(
      (await pools()).map((p) => p.name),
      ['a'],
    );
    // Without a monitor a pool probes nothing; a disabled pool or origin probes nothing either.
    const c = await call('POST', `${base}/load_balancers/pools`, { name: 'c', origins: origins(4) });
    assert.equal(c.status, 200);
    const cId = (c.body.result as { id: string }).id;
    const d = await call('POST', `${base}/load_balancers/pools`, {
      name: 'd',
      origins: origins(2),
      monitor: monitors.fast,
      enabled: false,
    });
    assert.equal(d.status, 200, JSON.stringify(d.body.errors));
    const dId = (d.body.result as { id: string }).id;
    // Enabling it is a change like any other: refused, and the pool stays disabled.
    expect400(await call('PATCH', `${base}/load_balancers/pools/${dId}`, { enabled: true }), /probe 10\.8 requests\/s/);
    const dNow = (await call('GET', `${base}/load_balancers/pools/${dId}`)).body.result as { enabled: boolean };
    assert.equal(dNow.enabled, false);
    // Giving pool c the fast monitor: 0.8 + 4 × 5 = 20.8.
    const cBefore = (await call('GET', `${base}/load_balancers/pools/${cId}`)).body.result;
    expect400(
      await call('PATCH', `${base}/load_balancers/pools/${cId}`, { monitor: monitors.fast }),
      /probe 20\.8 requests\/s, over limits\.probes_per_second 10 by 10\.8/,
    );
    assert.deepEqual((await call('GET', `${base}/load_balancers/pools/${cId}`)).body.result, cBefore);
    // One fast origin fits: 0.8 + 5 = 5.8 (with origin o1 disabled).
    const fits = await call('PUT', `${base}/load_balancers/pools/${dId}`, {
      name: 'd',
      origins: [origins(1)[0], { ...origins(2)[1], enabled: false }],
      monitor: monitors.fast,
      enabled: true,
    });
    assert.equal(fits.status, 200, JSON.stringify(fits.body.errors));
  });

  test('probes_per_second: a monitor change that would exceed it is refused for the pools using it', async () => {
    // Pools: a (4 origins, slow 0.8), d (1 enabled origin, fast 5) → 5.8.
    const slow = `${base}/load_balancers/monitors/${monitors.slow}`;
    const before = (await call('GET', slow)).body.result;
    // slow → interval 1, retries 1: 4 × 2 ÷ 1 = 8, + 5 = 13.
    expect400(
      await call('PATCH', slow, { interval: 1 }),
      /probe 13 requests\/s, over limits\.probes_per_second 10 by 3 /,
    );
    expect400(await call('PUT', slow, { interval: 1, retries: 1 }), /by 3 /);
    assert.deepEqual((await call('GET', slow)).body.result, before, 'the monitor is unchanged');
    // interval 2: 4 × 2 ÷ 2 = 4, + 5 = 9: fits; other fields change freely.
    assert.equal((await call('PATCH', slow, { interval: 2, description: 'x' })).status, 200);
    // A monitor no pool uses is free to change.
    const spare = await call('POST', `${base}/load_balancers/monitors`, { interval: 60 });
    const spareId = (spare.body.result as { id: string }).id;
    assert.equal(
      (await call('PATCH', `${base}/load_balancers/monitors/${spareId}`, { interval: 1, retries: 5 })).status,
      200,
    );
  });

  test('an account already over a limit may make changes that do not make it worse', async () => {
    await deleteAll();
    // Written below the API (as if the operator had lowered the limit since): 3 × 5 = 15 > 10.
    const over = await createPool(f.app.store.db, f.app.secrets, systemClock, f.accountId, {
      ...POOL_DEFAULTS,
      name: 'over',
      monitor: monitors.fast,
      origins: origins(3).map((origin) => ({ ...origin, weight: 1, header: {} })),
    });
    const path = `${base}/load_balancers/pools/${over.id}`;
    assert.equal((await call('PATCH', path, { description: 'renamed' })).status, 200);
    assert.equal((await call('PATCH', path, { name: 'over-2' })).status, 200);
    expect400(await call('PATCH', path, { origins: origins(4) }), /probe 20 requests\/s/);
    assert.equal((await call('PATCH', path, { origins: origins(2) })).status, 200, 'fewer origins is fine');
  });

  test('max_pools_per_account: creating one more is refused; parallel creates never both slip in', async () => {
    await deleteAll();
    for (const name of ['p1', 'p2', 'p3']) {
      assert.equal((await call('POST', `${base}/load_balancers/pools`, { name, origins: origins(1) })).status, 200);
    }
    const results = await Promise.all(
      ['q1', 'q2', 'q3', 'q4', 'q5'].map((name) =>
        call('POST', `${base}/load_balancers/pools`, { name, origins: origins(1) }),
      ),
    );
    assert.equal(results.filter((res) => res.status === 200).length, 1, 'exactly one fits');
    for (const res of results.filter((r) => r.status !== 200)) {
      expect400(
        res,
        new RegExp(
          `^account ${f.accountId} already has 4 pools, the most limits\\.max_pools_per_account \\(4\\) allows`,
        ),
      );
    }
    assert.equal((await pools()).length, 4);
  });

  test('probes_per_second under parallel writes: of two creates that each fit alone, one wins', async () => {
    // On the second account, which also shows the budget is per account (the first one is at its own).
    const other = `/accounts/${OTHER_ACCOUNT}`;
    const monitor = await call('POST', `${other}/load_balancers/monitors`, { interval: 1, retries: 0 }, f.otherToken);
    const id = (monitor.body.result as { id: string }).id;
    // Each pool: 3 origins × (1 retry + 1) ÷ 1 s = 6 requests/s of the 10; two would be 12.
    const fast = await call('PATCH', `${other}/load_balancers/monitors/${id}`, { retries: 1 }, f.otherToken);
    assert.equal(fast.status, 200);
    const results = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        call(
          'POST',
          `${other}/load_balancers/pools`,
          { name: `par-${i}`, origins: origins(3), monitor: id },
          f.otherToken,
        ),
      ),
    );
    assert.equal(
      results.filter((res) => res.status === 200).length,
      1,
      JSON.stringify(results.map((r) => r.body.errors)),
    );
    for (const res of results.filter((r) => r.status !== 200)) expect400(res, /probe 12 requests\/s, over .* by 2 /);
    assert.equal((await pools(OTHER_ACCOUNT, f.otherToken)).length, 1);
  });

  test('config pools are checked when the config loads', () => {
    const pool = (name: string, n: number, monitor?: Record<string, unknown>) => ({
      name,
      origins: origins(n).map(({ name: o, address }) => ({ name: o, address })),
      ...(monitor === undefined ? {} : { monitor }),
    });
    assert.throws(
      () => buildConfig({ limits: { max_origins_per_pool: 2 }, pools: [pool('big', 3)] }, 'x.yaml'),
      /pools\.0\.origins: pool "big" has 3 origins, more than limits\.max_origins_per_pool \(2\)/,
    );
    assert.throws(
      () => buildConfig({ limits: { max_pools_per_account: 1 }, pools: [pool('a', 1), pool('b', 1)] }, 'x.yaml'),
      /2 pools are declared, more than limits\.max_pools_per_account \(1\)/,
    );
    assert.throws(
      () => buildConfig({ pools: [pool('fast', 20, { interval: 1, retries: 2 })] }, 'x.yaml'),
      /would probe 60 requests\/s, over limits\.probes_per_second 50 by 10/,
    );
    const ok = buildConfig({ pools: [pool('fast', 20, { interval: 2, retries: 2 })] }, 'x.yaml');
    assert.deepEqual(ok.limits, { probes_per_second: 50, max_pools_per_account: 1000, max_origins_per_pool: 64 });
  });
});
