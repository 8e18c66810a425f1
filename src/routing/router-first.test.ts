/**
 * The router's fast path and the steering of SPEC §17: `first` picks what `plan` would put first (by
 * weight, statistically checked with a seeded stream), never an unusable origin; dynamic_latency orders
 * by score with its exploration share; network steering orders pools by their best score; throttled
 * origins are skipped, and a network with nothing but throttled origins is UPSTREAM_THROTTLED.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mulberry32 } from '../../test/helpers/seeded-rng.js';
import { SimpleHealthView } from '../../test/helpers/simple-health.js';
import { ManualClock } from '../clock.js';
import { isSwitchyardError } from '../errors/base.js';
import type { Pool } from '../model/pool.js';
import { ConnectDemotion } from './demotion.js';
import { OutstandingRequests } from './outstanding.js';
import { type NetworkSteering, OriginRouter } from './router.js';
import { ScoreBook } from './scores/score-book.js';
import { poolFromConfig, StaticPoolDirectory } from './static-directory.js';
import { OriginThrottle } from './throttling.js';

const ACCOUNT = '0123456789abcdef0123456789abcdef';

function pool(
  name: string,
  origins: Array<{ name: string; weight?: number; max_requests_per_second?: number }>,
  policy: Pool['origin_steering']['policy'] = 'random',
): Pool {
  return poolFromConfig(
    {
      name,
      origins: origins.map((o) => ({ ...o, address: `http://127.0.0.1:1/${o.name}` })),
      origin_steering: { policy },
    },
    ACCOUNT,
    '2026-01-01T00:00:00.000Z',
  );
}

function setup(pools: Pool[], options: { seed?: number; steering?: NetworkSteering; exploration?: number } = {}) {
  const clock = new ManualClock(0);
  const directory = new StaticPoolDirectory(pools);
  const health = new SimpleHealthView(directory);
  const demotion = new ConnectDemotion(clock, 5_000);
  const scores = new ScoreBook(clock);
  const throttle = new OriginThrottle(clock);
  const router = new OriginRouter({
    directory,
    health,
    demotion,
    outstanding: new OutstandingRequests(),
    random: mulberry32(options.seed ?? 1),
    scores,
    throttle,
    networkSteering: () => options.steering ?? 'off',
    ...(options.exploration === undefined ? {} : { exploration: options.exploration }),
    clock,
  });
  return { clock, directory, demotion, scores, throttle, router };
}

/** Pearson's χ² of observed counts against expected shares. */
function chiSquare(counts: readonly number[], shares: readonly number[], total: number): number {
  return counts.reduce((sum, count, i) => {
    const expected = (shares[i] as number) * total;
    return sum + (count - expected) ** 2 / expected;
  }, 0);
}

describe('the router’s first candidate', () => {
  it('follows the weights (χ² over 64 origins, seeded), as the whole plan does', () => {
    const rng = mulberry32(42);
    const weights = Array.from({ length: 64 }, () => 0.05 + rng() * 0.95);
    const big = pool(
      'big',
      weights.map((weight, i) => ({ name: `o${i}`, weight })),
    );
    const { router } = setup([big], { seed: 7 });
    const total = weights.reduce((a, b) => a + b, 0);
    const shares = weights.map((w) => w / total);
    const draws = 40_000;
    const first = new Array<number>(64).fill(0);
    const planned = new Array<number>(64).fill(0);
    for (let i = 0; i < draws; i += 1) {
      const pick = router.first('n', ['big']);
      assert.ok(pick !== undefined);
      (first[Number(pick.origin.name.slice(1))] as number) += 1;
    }
    for (let i = 0; i < draws / 4; i += 1) {
      const head = router.plan('n', ['big'])[0];
      (planned[Number(head?.origin.name.slice(1))] as number) += 1;
    }
    // 63 degrees of freedom: χ² above 110 has a probability under 0.02 %.
    assert.ok(chiSquare(first, shares, draws) < 110, `first: χ² ${chiSquare(first, shares, draws)}`);
    assert.ok(chiSquare(planned, shares, draws / 4) < 110, `plan: χ² ${chiSquare(planned, shares, draws / 4)}`);
  });

  it('never picks an unusable origin: demoted, benched or at its cap; undefined when it cannot tell', () => {
    const p = pool('p', [{ name: 'a' }, { name: 'b' }, { name: 'c', max_requests_per_second: 1 }]);
    const { router, demotion, throttle } = setup([p]);
    demotion.demote(p.id, 'a');
    throttle.bench(p.id, 'b', 10_000);
    throttle.take(p.id, p.origins[2] as Pool['origins'][number]);
    for (let i = 0; i < 50; i += 1) assert.equal(router.first('n', ['p']), undefined);
    assert.deepEqual(
      router.plan('n', ['p']).map((c) => c.origin.name),
      ['a'],
      'the plan still offers the demoted origin, last; never a throttled one',
    );
  });

  it('an accept condition (the call’s chain need) is checked on the candidate drawn', () => {
    const p = pool('p', [{ name: 'a' }, { name: 'b' }]);
    const { router } = setup([p]);
    const picks = new Set<string | undefined>();
    for (let i = 0; i < 200; i += 1) picks.add(router.first('n', ['p'], '', (c) => c.origin.name === 'b')?.origin.name);
    // b when a draw finds it, else undefined (four draws of a in a row: the caller builds the plan).
    assert.deepEqual([...picks].sort(), ['b', undefined]);
  });

  it('only throttled origins left: UPSTREAM_THROTTLED (429) with the soonest Retry-After', () => {
    const p = pool('p', [{ name: 'a' }, { name: 'b' }]);
    const { router, throttle } = setup([p]);
    throttle.bench(p.id, 'a', 4_000);
    throttle.bench(p.id, 'b', 2_500);
    assert.throws(
      () => router.plan('n', ['p']),
      (err: unknown) => {
        assert.ok(isSwitchyardError(err));
        assert.equal(err.code, 'UPSTREAM_THROTTLED');
        assert.equal(err.httpStatus, 429);
        assert.equal(err.headers?.['retry-after'], '3');
        return true;
      },
    );
  });
});

describe('dynamic_latency steering', () => {
  it('the best score first; unknown origins ahead of scored ones; the exploration share goes elsewhere', () => {
    const p = pool('p', [{ name: 'fast' }, { name: 'slow' }, { name: 'worse' }], 'dynamic_latency');
    const { router, scores, clock } = setup([p], { exploration: 0.05 });
    assert.ok(['fast', 'slow', 'worse'].includes(router.first('n', ['p'])?.origin.name ?? ''), 'unknown: any');
    for (let i = 0; i < 50; i += 1) {
      scores.record(p.id, 'fast', 'ok', 5);
      scores.record(p.id, 'slow', 'ok', 50);
      scores.record(p.id, 'worse', 'ok', 20);
      scores.record(p.id, 'worse', 'error', 0);
    }
    clock.advance(200); // the pool's score order is re-read at most every 100 ms
    const counts: Record<string, number> = { fast: 0, slow: 0, worse: 0 };
    for (let i = 0; i < 10_000; i += 1) (counts[router.first('n', ['p'])?.origin.name as string] as number) += 1;
    const explored = 10_000 - (counts.fast as number);
    assert.ok(explored > 350 && explored < 650, `explored ${explored} of 10000 (5 %)`);
    assert.deepEqual(
      router.plan('n', ['p']).map((c) => c.origin.name),
      ['fast', 'slow', 'worse'],
      'by score: 5 ms; 50 ms; 20 ms with half its attempts failed (× 3)',
    );
  });

  it('networks.{name}.steering: dynamic_latency orders pools by their best origin; off keeps the list', () => {
    const far = pool('far', [{ name: 'x' }]);
    const near = pool('near', [{ name: 'y' }]);
    const steered = setup([far, near], { steering: 'dynamic_latency', exploration: 0 });
    for (let i = 0; i < 30; i += 1) {
      steered.scores.record(far.id, 'x', 'ok', 80);
      steered.scores.record(near.id, 'y', 'ok', 8);
    }
    assert.deepEqual(
      steered.router.plan('n', ['far', 'near']).map((c) => c.pool.name),
      ['near', 'far'],
    );
    assert.equal(steered.router.first('n', ['far', 'near'])?.pool.name, 'near');
    const ordered = setup([far, near], { steering: 'off' });
    for (let i = 0; i < 30; i += 1) ordered.scores.record(near.id, 'y', 'ok', 8);
    assert.equal(ordered.router.first('n', ['far', 'near'])?.pool.name, 'far');
  });
});
