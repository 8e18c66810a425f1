import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Rng } from '../../../test/helpers/seeded-rng.js';
import { ManualClock } from '../../clock.js';
import { SCORE_HALF_LIFE_MS } from './decaying-window.js';
import { ScoreBook } from './score-book.js';

const near = (actual: number | null | undefined, expected: number, tolerance: number, what: string) =>
  assert.ok(
    actual !== null && actual !== undefined && Math.abs(actual - expected) <= tolerance,
    `${what}: ${actual} vs ${expected}`,
  );

describe('origin scores: the decaying window', () => {
  it('p50 and p90 of answered attempts, within the buckets’ 20 %', () => {
    const clock = new ManualClock(0);
    const book = new ScoreBook(clock);
    const rng = new Rng(5);
    for (let i = 0; i < 2_000; i += 1) book.record('p', 'a', 'ok', 1 + rng.next() * 99);
    const score = book.score('p', 'a');
    near(score?.p50_ms, 50, 10, 'p50');
    near(score?.p90_ms, 90, 18, 'p90');
    assert.equal(score?.error_ratio, 0);
    near(score?.score, (score?.p90_ms ?? 0) / 1000, 1e-9, 'score = p90 without failures');
  });

  it('errors and throttles weigh in: p90 × (1 + 4 × errors + 4 × throttles)', () => {
    const clock = new ManualClock(0);
    const book = new ScoreBook(clock);
    for (let i = 0; i < 80; i += 1) book.record('p', 'a', 'ok', 20);
    for (let i = 0; i < 10; i += 1) book.record('p', 'a', 'error', 0);
    for (let i = 0; i < 10; i += 1) book.record('p', 'a', 'throttled', 0);
    const score = book.score('p', 'a');
    near(score?.error_ratio, 0.1, 1e-9, 'error ratio');
    near(score?.throttle_ratio, 0.1, 1e-9, 'throttle ratio');
    near(score?.score, ((score?.p90_ms ?? 0) / 1000) * 1.8, 1e-9, 'score');
    near(score?.samples, 100, 1e-6, 'samples');
    near(score?.answered, 80, 1e-6, 'answered');
  });

  it('old samples fade: a recovered origin scores by its new answers within a few half-lives', () => {
    const clock = new ManualClock(0);
    const book = new ScoreBook(clock);
    for (let i = 0; i < 100; i += 1) book.record('p', 'a', 'ok', 300);
    clock.advance(4 * SCORE_HALF_LIFE_MS);
    for (let i = 0; i < 100; i += 1) book.record('p', 'a', 'ok', 10);
    // The 300 ms answers weigh 1/16 now: 6 % of the window, under the p90.
    near(book.score('p', 'a')?.p90_ms, 10, 2, 'p90 after recovery');
    near(book.score('p', 'a')?.samples, 106.25, 1e-6, 'decayed samples');
  });

  it('an origin without recent samples has no score; one that only failed scores worse than unknown', () => {
    const clock = new ManualClock(0);
    const book = new ScoreBook(clock);
    assert.equal(book.score('p', 'a'), undefined);
    book.record('p', 'a', 'ok', 5);
    assert.notEqual(book.score('p', 'a')?.score, null);
    clock.advance(10 * SCORE_HALF_LIFE_MS);
    assert.equal(book.score('p', 'a')?.score, null, 'a lone sample long gone');
    book.record('p', 'b', 'error', 0);
    assert.equal(book.score('p', 'b')?.score, 5, 'no answer: p90 taken as 1 s, × (1 + 4)');
  });

  it('weights are rescaled over long runs without changing the figures', () => {
    const clock = new ManualClock(0);
    const book = new ScoreBook(clock);
    for (let t = 0; t < 100; t += 1) {
      clock.advance(SCORE_HALF_LIFE_MS);
      for (let i = 0; i < 10; i += 1) book.record('p', 'a', 'ok', 40);
    }
    near(book.score('p', 'a')?.p90_ms, 40, 8, 'p90 after 100 half-lives');
    near(book.score('p', 'a')?.samples, 20, 0.1, 'samples: 10 per half-life adds up to 20');
  });

  it("a worker's report adds up in the control's book; relayed probes are adopted, never reported back", () => {
    const clock = new ManualClock(0);
    const worker = new ScoreBook(clock, { reporting: true });
    const control = new ScoreBook(clock, { relaying: true });
    for (let i = 0; i < 50; i += 1) worker.record('p', 'a', 'ok', 30);
    worker.record('p', 'a', 'throttled', 0);
    control.add(worker.drain());
    assert.deepEqual(worker.drain(), [], 'drained once');
    assert.deepEqual(control.score('p', 'a'), worker.score('p', 'a'));
    control.probe('p', 'b', 'error', 0);
    const relayed = control.drainProbes();
    assert.deepEqual(relayed, [['p', 'b', 'error', 0]]);
    for (const [pool, origin, outcome, ms] of relayed) worker.adopt(pool, origin, outcome, ms);
    assert.equal(worker.score('p', 'b')?.error_ratio, 1);
    assert.deepEqual(worker.drain(), [], 'an adopted probe is not reported back');
  });

  it('prune forgets origins no pool has any more', () => {
    const clock = new ManualClock(0);
    const book = new ScoreBook(clock);
    book.record('p', 'a', 'ok', 1);
    book.record('p', 'b', 'ok', 1);
    book.record('q', 'c', 'ok', 1);
    book.prune([{ id: 'p', origins: [{ name: 'a' }] }]);
    assert.notEqual(book.score('p', 'a'), undefined);
    assert.equal(book.score('p', 'b'), undefined);
    assert.equal(book.score('q', 'c'), undefined);
  });
});
