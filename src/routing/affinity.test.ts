/**
 * `hash` steering (session affinity): a client keeps one origin while it is healthy, moves when it is not,
 * and comes back after; clients spread over origins by weight; removing an origin moves only its clients.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SimpleHealthView } from '../../test/helpers/simple-health.js';
import { ManualClock } from '../clock.js';
import type { Origin } from '../model/pool.js';
import { ConnectDemotion } from './demotion.js';
import { OutstandingRequests } from './outstanding.js';
import { affinityOrder, OriginRouter } from './router.js';
import { poolFromConfig, StaticPoolDirectory } from './static-directory.js';

const ACCOUNT = '0123456789abcdef0123456789abcdef';
const NOW = '2026-01-01T00:00:00.000Z';

function origins(names: string[], weights: Record<string, number> = {}): Origin[] {
  return poolFromConfig(
    {
      name: 'p',
      origins: names.map((name) => ({ name, address: `http://127.0.0.1:1/${name}`, weight: weights[name] ?? 1 })),
    },
    ACCOUNT,
    NOW,
  ).origins;
}

describe('hash steering (session affinity)', () => {
  it('gives each client the same first origin on every call', () => {
    const list = origins(['a', 'b', 'c']);
    for (let i = 0; i < 50; i += 1) {
      const client = `10.0.0.${i}`;
      const first = affinityOrder(list, client)[0]?.name;
      for (let k = 0; k < 5; k += 1) assert.equal(affinityOrder(list, client)[0]?.name, first);
    }
  });

  it('spreads clients over origins in proportion to weight', () => {
    const list = origins(['a', 'b'], { a: 1, b: 0.25 });
    const counts = { a: 0, b: 0 };
    for (let i = 0; i < 4000; i += 1) counts[affinityOrder(list, `client-${i}`)[0]?.name as 'a' | 'b'] += 1;
    // expected share of b: 0.25 / 1.25 = 20 %
    assert.ok(counts.b > 600 && counts.b < 1000, `b got ${counts.b} of 4000`);
  });

  it('moves only the clients of a removed origin', () => {
    const three = origins(['a', 'b', 'c']);
    const two = three.filter((o) => o.name !== 'c');
    for (let i = 0; i < 500; i += 1) {
      const client = `c${i}`;
      const before = affinityOrder(three, client)[0]?.name;
      const after = affinityOrder(two, client)[0]?.name;
      if (before !== 'c') assert.equal(after, before, `client ${client} moved from ${before} to ${after}`);
    }
  });

  it('keeps a client on its origin while healthy, moves it when not, and brings it back', () => {
    const pool = { ...poolFromConfig({ name: 'p', origins: origins(['a', 'b', 'c']) }, ACCOUNT, NOW) };
    pool.origin_steering = { policy: 'hash' };
    const directory = new StaticPoolDirectory([pool]);
    const down = new Set<string>();
    const health = new SimpleHealthView(directory);
    health.originHealthy = (_pool: string, name: string) => !down.has(name);
    const router = new OriginRouter({
      directory,
      health,
      demotion: new ConnectDemotion(new ManualClock(NOW), 5000),
      outstanding: new OutstandingRequests(),
    });
    const first = () => router.plan('n', ['p'], '192.0.2.7')[0]?.origin.name;
    const home = first();
    assert.ok(home);
    for (let i = 0; i < 20; i += 1) assert.equal(first(), home);
    down.add(home);
    const moved = first();
    assert.notEqual(moved, home);
    for (let i = 0; i < 20; i += 1) assert.equal(first(), moved);
    down.delete(home);
    assert.equal(first(), home);
  });
});
