import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SimpleHealthView } from '../../test/helpers/simple-health.js';
import { ManualClock } from '../clock.js';
import { isSwitchyardError } from '../errors/base.js';
import type { Pool } from '../model/pool.js';
import { ConnectDemotion } from './demotion.js';
import { OutstandingRequests } from './outstanding.js';
import { OriginRouter, weightedShuffle } from './router.js';
import { poolFromConfig, StaticPoolDirectory } from './static-directory.js';

const ACCOUNT = '0123456789abcdef0123456789abcdef';
const NOW = '2026-01-01T00:00:00.000Z';

function pool(
  name: string,
  origins: Array<{ name: string; weight?: number; enabled?: boolean }>,
  extra: Partial<Pool> = {},
): Pool {
  const base = poolFromConfig(
    { name, origins: origins.map((o) => ({ ...o, address: `http://127.0.0.1:1/${o.name}` })) },
    ACCOUNT,
    NOW,
  );
  return { ...base, ...extra };
}

/** A deterministic [0,1) sequence. */
function sequence(seed = 1): () => number {
  let state = seed;
  return () => {
    state = (state * 48271) % 2147483647;
    return state / 2147483647;
  };
}

function setup(pools: Pool[], random = sequence()) {
  const clock = new ManualClock(NOW);
  const directory = new StaticPoolDirectory(pools);
  const health = new SimpleHealthView(directory);
  const demotion = new ConnectDemotion(clock, 5000);
  const outstanding = new OutstandingRequests();
  const router = new OriginRouter({ directory, health, demotion, outstanding, random });
  const names = (network: string, poolNames: string[]) =>
    router.plan(network, poolNames).map((c) => `${c.pool.name}/${c.origin.name}`);
  return { clock, directory, demotion, outstanding, router, names };
}

describe('Router', () => {
  it('lists the first pool before the next one (failover order)', () => {
    const { names } = setup([
      pool('primary', [{ name: 'a' }]),
      pool('backup', [{ name: 'b' }, { name: 'c', weight: 0.5 }]),
    ]);
    const plan = names('n', ['primary', 'backup']);
    assert.equal(plan[0], 'primary/a');
    assert.deepEqual(plan.slice(1).sort(), ['backup/b', 'backup/c']);
  });

  it('never chooses weight 0, disabled origins, or disabled pools', () => {
    const { names } = setup([
      pool('p', [{ name: 'zero', weight: 0 }, { name: 'off', enabled: false }, { name: 'on' }]),
      pool('dead', [{ name: 'x' }], { enabled: false }),
    ]);
    for (let i = 0; i < 50; i += 1) assert.deepEqual(names('n', ['dead', 'p']), ['p/on']);
  });

  it('steers by weight', () => {
    const { names } = setup([
      pool('p', [
        { name: 'heavy', weight: 1 },
        { name: 'light', weight: 0.25 },
      ]),
    ]);
    let heavyFirst = 0;
    for (let i = 0; i < 2000; i += 1) if (names('n', ['p'])[0] === 'p/heavy') heavyFirst += 1;
    // Expected share 1 / 1.25 = 80 %.
    assert.ok(heavyFirst > 1450 && heavyFirst < 1750, `heavy first ${heavyFirst} of 2000`);
  });

  it('moves a demoted origin to the end and brings it back after the demotion', () => {
    const { names, demotion, clock, directory } = setup([
      pool('p', [{ name: 'a' }, { name: 'b' }]),
      pool('q', [{ name: 'c' }]),
    ]);
    const p = directory.poolByName('p') as Pool;
    demotion.demote(p.id, 'a');
    for (let i = 0; i < 20; i += 1) assert.deepEqual(names('n', ['p', 'q']), ['p/b', 'q/c', 'p/a']);
    clock.advance(5000);
    const seen = new Set<string>();
    for (let i = 0; i < 50; i += 1) seen.add(names('n', ['p', 'q'])[0] as string);
    assert.deepEqual([...seen].sort(), ['p/a', 'p/b']);
  });

  it('least_outstanding_requests prefers the origin with fewer requests in flight per weight', () => {
    const steered = pool('p', [{ name: 'a' }, { name: 'b' }], {
      origin_steering: { policy: 'least_outstanding_requests' },
    });
    const { names, outstanding } = setup([steered]);
    const end = outstanding.start(steered.id, 'a');
    for (let i = 0; i < 20; i += 1) assert.equal(names('n', ['p'])[0], 'p/b');
    end();
    outstanding.start(steered.id, 'b');
    assert.equal(names('n', ['p'])[0], 'p/a');
  });

  it('no usable origin → NO_HEALTHY_ORIGIN naming each pool and why', () => {
    const { router } = setup([pool('p', [{ name: 'a', enabled: false }])]);
    assert.throws(
      () => router.plan('sepolia', ['p', 'missing']),
      (err: unknown) => {
        assert.ok(isSwitchyardError(err));
        assert.equal(err.code, 'NO_HEALTHY_ORIGIN');
        assert.equal(err.httpStatus, 503);
        assert.match(err.message, /sepolia/);
        assert.deepEqual(err.details, {
          network: 'sepolia',
          pools: [
            { pool: 'p', reason: 'pool is unhealthy' },
            { pool: 'missing', reason: 'pool does not exist' },
          ],
        });
        return true;
      },
    );
    assert.throws(() => router.plan('x', []), /no pools configured/);
  });

  it('weightedShuffle returns every origin exactly once', () => {
    const origins = pool('p', [{ name: 'a' }, { name: 'b', weight: 0.1 }, { name: 'c', weight: 0.7 }]).origins;
    const random = sequence(7);
    for (let i = 0; i < 100; i += 1) {
      assert.deepEqual(
        weightedShuffle(origins, random)
          .map((o) => o.name)
          .sort(),
        ['a', 'b', 'c'],
      );
    }
  });
});
