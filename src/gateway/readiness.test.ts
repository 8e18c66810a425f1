import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../clock.js';
import { buildConfig } from '../config/load.js';
import type { HealthView } from '../model/health-view.js';
import type { Pool } from '../model/pool.js';
import { poolFromConfig, StaticPoolDirectory } from '../routing/static-directory.js';
import { GatewayReadiness } from './readiness.js';

const ACCOUNT = '0123456789abcdef0123456789abcdef';
const NOW = '2026-01-01T00:00:00.000Z';

function pool(
  name: string,
  origins: Array<{ name: string; weight?: number; enabled?: boolean }>,
  extra: Partial<Pool> = {},
) {
  const base = poolFromConfig(
    { name, origins: origins.map((o) => ({ ...o, address: `http://127.0.0.1:1/${o.name}` })) },
    ACCOUNT,
    NOW,
  );
  return { ...base, ...extra };
}

/** Health by name: origins ("pool/origin") and pools listed as down are unhealthy. */
function health(down: Set<string>, pools: Pool[]): HealthView {
  const name = (id: string) => pools.find((p) => p.id === id)?.name ?? id;
  return {
    originHealthy: (poolId, origin) => !down.has(`${name(poolId)}/${origin}`),
    poolHealthy: (poolId) => !down.has(name(poolId)),
    reportFailure: () => {},
  };
}

const NETWORKS = buildConfig(
  {
    networks: {
      main: { chain_id: 1, pools: ['a', 'b'] },
      empty: { chain_id: 2, pools: [] },
      later: { chain_id: 3, pools: ['c'], retired_on: '2026-06-01' },
    },
  },
  'x',
).networks;

function setup(options: { down?: string[]; storeReady?: () => boolean | Promise<boolean>; pools?: Pool[] } = {}) {
  const pools = options.pools ?? [
    pool('a', [{ name: 'a1' }, { name: 'a2', weight: 0 }]),
    pool('b', [{ name: 'b1' }]),
    pool('c', [{ name: 'c1' }]),
  ];
  const clock = new ManualClock(NOW);
  const readiness = new GatewayReadiness({
    networks: NETWORKS,
    directory: new StaticPoolDirectory(pools),
    health: health(new Set(options.down ?? []), pools),
    store: { storeReady: options.storeReady ?? (() => true) },
    clock,
  });
  return { readiness, clock };
}

describe('GatewayReadiness', () => {
  it('a network is ready while one of its pools is routable; one without pools never is', async () => {
    const report = await setup({ down: ['a'] }).readiness.report();
    assert.deepEqual(report.networks.main, { ready: true, reason: null });
    assert.deepEqual(report.networks.empty, { ready: false, reason: 'no pools configured' });
    assert.equal(report.ready, false);
  });

  it('names why each pool is skipped, with the router’s words', async () => {
    const pools = [
      pool('a', [
        { name: 'a1', weight: 0 },
        { name: 'a2', enabled: false },
      ]),
      pool('c', [{ name: 'c1' }]),
    ];
    const { readiness } = setup({ pools, down: ['c/c1'] });
    const report = await readiness.report();
    assert.deepEqual(report.networks.main, {
      ready: false,
      reason: 'no routable pool (a: no enabled, healthy origin with weight > 0; b: pool does not exist)',
    });
    assert.deepEqual(report.networks.later, {
      ready: false,
      reason: 'no routable pool (c: no enabled, healthy origin with weight > 0)',
    });
    const disabled = await setup({
      pools: [pool('a', [{ name: 'a1' }], { enabled: false })],
      down: ['b'],
    }).readiness.report();
    assert.equal(disabled.networks.main?.reason, 'no routable pool (a: pool is disabled; b: pool does not exist)');
    const unhealthy = await setup({ down: ['a', 'b'] }).readiness.report();
    assert.equal(unhealthy.networks.main?.reason, 'no routable pool (a: pool is unhealthy; b: pool is unhealthy)');
  });

  it('a network leaves the report from its retired_on (00:00 UTC, by the injected clock) on', async () => {
    const { readiness, clock } = setup();
    assert.ok('later' in (await readiness.report()).networks);
    clock.set('2026-05-31T23:59:59.999Z');
    assert.ok('later' in (await readiness.report()).networks);
    clock.set('2026-06-01T00:00:00.000Z');
    assert.deepEqual(Object.keys((await readiness.report()).networks), ['main', 'empty']);
  });

  it('the store: not ready when it says so, rejects or throws; the networks are still reported', async () => {
    for (const storeReady of [
      () => false,
      () => Promise.resolve(false),
      () => Promise.reject(new Error('gone')),
      () => {
        throw new Error('gone');
      },
    ]) {
      const report = await setup({
        storeReady,
        pools: [pool('a', [{ name: 'a1' }]), pool('c', [{ name: 'c1' }])],
      }).readiness.report();
      assert.equal(report.ready, false);
      assert.deepEqual(report.store, { ready: false, reason: 'the store did not answer a query' });
      assert.deepEqual(report.networks.main, { ready: true, reason: null });
    }
  });

  it('ready when the store answers and every listed network is', async () => {
    const networks = buildConfig({ networks: { main: { chain_id: 1, pools: ['a'] } } }, 'x').networks;
    const pools = [pool('a', [{ name: 'a1' }])];
    const readiness = new GatewayReadiness({
      networks,
      directory: new StaticPoolDirectory(pools),
      health: health(new Set(), pools),
      store: { storeReady: async () => true },
      clock: new ManualClock(NOW),
    });
    assert.deepEqual(await readiness.report(), {
      ready: true,
      store: { ready: true, reason: null },
      networks: { main: { ready: true, reason: null } },
    });
  });
});
