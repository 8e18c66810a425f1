/**
 * The failsafe rules, walked row by row (SPEC §17: "rules as data, each tested once"): for every row of
 * FAILSAFE_RULES, a scripted call meets the row's event on its first origin and the engine must do what
 * the row says — its action (which origins are tried, what the client gets) and each effect column
 * (health, bench, score, keep). The scripts stand in for origins (the engine's `start` seam); the
 * router, throttle, scores, feedback and metrics are the real ones. Then the invariants the spec puts
 * on the table itself: a write is resent only after a connect failure and never hedged; throttling and
 * the gateway's own capacity never touch an origin's health.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { systemClock } from '../../../clock.js';
import { isSwitchyardError } from '../../../errors/base.js';
import { silentLogger } from '../../../log.js';
import { MetricsRegistry } from '../../../metrics/registry.js';
import type { HealthView } from '../../../model/health-view.js';
import type { Origin, Pool } from '../../../model/pool.js';
import { OriginFeedback } from '../../../routing/feedback.js';
import type { Candidate } from '../../../routing/router.js';
import { ScoreBook } from '../../../routing/scores/score-book.js';
import { poolFromConfig } from '../../../routing/static-directory.js';
import { OriginThrottle } from '../../../routing/throttling.js';
import { GatewayMetrics } from '../../metrics.js';
import { AttemptFailure, type FailureKind } from '../attempt-failure.js';
import type { PlanCursor } from '../call-plan.js';
import { type FailsafeAnswer, type Judged, runFailsafe } from './engine.js';
import type { CallRules } from './method-rules.js';
import { type CallClass, FAILSAFE_RULES, type FailsafeEvent, type FailsafeRule, ruleFor } from './rules.js';

const ACCOUNT = '0123456789abcdef0123456789abcdef';

/** What one origin does with an attempt. */
type Step =
  | { readonly answer: Judged['event']; readonly afterMs?: number; readonly retryAfterMs?: number }
  | { readonly fail: FailureKind; readonly answer?: undefined; readonly retryAfterMs?: number; readonly body?: string }
  | { readonly capped: true; readonly answer?: undefined };

interface Reply {
  readonly origin: string;
  readonly judged: Judged;
  readonly note?: string;
}

interface Scenario {
  /** What each origin does, attempt after attempt. */
  readonly steps: Readonly<Record<string, readonly Step[]>>;
  readonly hedge?: CallRules['hedge'];
  readonly maxAttempts?: number;
  /** mostAdvanced's answer. */
  readonly ahead?: string;
}

function pool(names: readonly string[], capped: readonly string[]): Pool {
  return poolFromConfig(
    {
      name: 'p',
      origins: names.map((name) => ({
        name,
        address: `http://127.0.0.1:1/${name}`,
        ...(capped.includes(name) ? { max_requests_per_second: 1 } : {}),
      })),
    },
    ACCOUNT,
    '2026-01-01T00:00:00.000Z',
  );
}

class ListPlan implements PlanCursor {
  #at = 0;
  constructor(readonly list: Candidate[]) {}
  next(): Candidate | undefined {
    return this.list[this.#at++];
  }
  hasMore(): boolean {
    return this.#at < this.list.length;
  }
  putNext(candidate: Candidate): void {
    const later = this.list.indexOf(candidate, this.#at);
    if (later >= 0) this.list.splice(later, 1);
    this.list.splice(this.#at, 0, candidate);
  }
  all(): readonly Candidate[] {
    return this.list;
  }
}

/** Runs one scripted call; what happened, as the test reads it. */
async function play(calls: CallClass, scenario: Scenario) {
  const names = Object.keys(scenario.steps);
  const capped = names.filter((name) => {
    const first = scenario.steps[name]?.[0];
    return first !== undefined && 'capped' in first;
  });
  const p = pool(names, capped);
  const candidates = p.origins.map((origin: Origin) => ({ pool: p, origin }));
  const byName = new Map(candidates.map((c) => [c.origin.name, c]));
  const reports: string[] = [];
  const health: HealthView = {
    originHealthy: () => true,
    poolHealthy: () => true,
    reportFailure: (_pool, origin, _reason, kind) => reports.push(`fail ${origin} ${kind}`),
    reportSuccess: (_pool, origin) => reports.push(`ok ${origin}`),
  };
  const registry = new MetricsRegistry();
  const metrics = new GatewayMetrics(registry, ['n']);
  const scores = new ScoreBook(systemClock);
  const throttle = new OriginThrottle(systemClock);
  for (const name of capped) throttle.take(p.id, byName.get(name)?.origin as Origin);
  const tried: string[] = [];
  const used = new Map<string, number>();
  const rules: CallRules = {
    timeoutMs: 1_000,
    maxAttempts: scenario.maxAttempts ?? 3,
    hedge: calls === 'read' ? scenario.hedge : undefined,
    verify: 'off',
  };
  const deps = {
    feedback: new OriginFeedback(health, systemClock),
    logger: silentLogger,
    metrics,
    clock: systemClock,
    scores,
    throttle,
  };
  let answer: FailsafeAnswer<Reply> | undefined;
  let error: unknown;
  try {
    answer = await runFailsafe<Reply>(deps, {
      network: 'n',
      method: calls === 'write' ? 'eth_sendRawTransaction' : 'eth_call',
      calls,
      plan: new ListPlan([...candidates]),
      signal: undefined,
      rules,
      start: (candidate) => {
        const name = candidate.origin.name;
        tried.push(name);
        const index = used.get(name) ?? 0;
        used.set(name, index + 1);
        const step = scenario.steps[name]?.[index] ?? { answer: 'answer' };
        return { result: outcome(name, step), live: undefined };
      },
      judge: (_candidate, reply) => reply.judged,
      mostAdvanced: () => (scenario.ahead === undefined ? undefined : byName.get(scenario.ahead)),
      discard: () => {},
    });
  } catch (err) {
    error = err;
  }
  const hedges = registry.families().find((f) => f.name === 'switchyard_hedges_total');
  const won = hedges?.samples.find((s) => s.labels.outcome === 'won')?.value ?? 0;
  const lost = hedges?.samples.find((s) => s.labels.outcome === 'lost')?.value ?? 0;
  const a = byName.get('a') as Candidate;
  return {
    tried,
    answer,
    error,
    reports,
    hedges: { won, lost },
    benchedA: throttle.wait(p.id, a.origin) > 0,
    scoreA: scores.score(p.id, 'a'),
  };
}

function outcome(name: string, step: Step): Promise<Reply> {
  if ('capped' in step) return Promise.reject(new Error('a capped origin was started'));
  if (step.answer !== undefined) {
    const judged: Judged =
      step.answer === 'partly-throttled'
        ? { event: 'partly-throttled', retryAfterMs: step.retryAfterMs }
        : { event: step.answer };
    const reply = { origin: name, judged };
    if (step.afterMs === undefined) return Promise.resolve(reply);
    return new Promise((resolve) => setTimeout(resolve, step.afterMs, reply));
  }
  const throttle =
    step.fail === 'throttled'
      ? {
          retryAfterMs: step.retryAfterMs,
          answer: step.body === undefined ? undefined : { origin: name, judged: { event: 'answer' }, note: step.body },
        }
      : undefined;
  return Promise.reject(new AttemptFailure(step.fail, `${step.fail} at ${name}`, throttle));
}

/**
 * The call that makes origin `a` meet the row's event, the others answering: what the row's action
 * is checked against.
 */
function scenarioFor(row: FailsafeRule): Scenario {
  const ok: Step = { answer: 'answer' };
  switch (row.on) {
    case 'answer':
      return { steps: { a: [ok], b: [ok] } };
    case 'missing':
    case 'bad':
      // b fails too: a's answer, kept, passes through.
      return { steps: { a: [{ answer: row.on }], b: [{ fail: 'status' }] } };
    case 'behind':
    case 'behind-again':
      // a is behind; c (the most advanced) is behind too: its answer passes.
      return { steps: { a: [{ answer: 'behind' }], b: [ok], c: [{ answer: 'behind' }] }, ahead: 'c' };
    case 'partly-throttled':
      return { steps: { a: [{ answer: 'partly-throttled', retryAfterMs: 5_000 }], b: [ok] } };
    case 'throttled':
      return { steps: { a: [{ fail: 'throttled', retryAfterMs: 5_000, body: 'rate limited' }], b: [ok] } };
    case 'slow':
      return { steps: { a: [{ answer: 'answer', afterMs: 300 }], b: [ok] }, hedge: { after: 20, max: 1 } };
    case 'capped':
      return { steps: { a: [{ capped: true }], b: [ok] }, maxAttempts: 1 };
    default:
      return { steps: { a: [{ fail: row.on as FailureKind }], b: [ok] } };
  }
}

/** The rows with `any` as both kinds of call. */
const ROWS: Array<{ row: FailsafeRule; calls: CallClass }> = FAILSAFE_RULES.flatMap((row) =>
  row.calls === 'any' ? (['read', 'write'] as const).map((calls) => ({ row, calls })) : [{ row, calls: row.calls }],
);

describe('the failsafe rules, row by row', () => {
  for (const { row, calls } of ROWS) {
    it(`${row.on} on a ${calls} → ${row.then}${row.health ? ', health' : ''}${row.bench ? ', bench' : ''}, score ${row.score}${row.keep ? ', keep' : ''}`, async () => {
      const seen = await play(calls, scenarioFor(row));
      const from = seen.answer?.reply.origin;
      switch (row.then) {
        case 'accept':
          if (row.on === 'behind-again') assert.deepEqual([seen.tried, from], [['a', 'c'], 'c']);
          else assert.deepEqual([seen.tried, from], [['a'], 'a']);
          break;
        case 'next':
          assert.deepEqual([seen.tried, from], [['a', 'b'], 'b']);
          break;
        case 'fallback-next':
          assert.deepEqual([seen.tried, from, seen.answer?.event], [['a', 'b'], 'a', 'fallback']);
          break;
        case 'most-advanced':
          assert.deepEqual([seen.tried, from], [['a', 'c'], 'c']);
          break;
        case 'stop':
          assert.deepEqual(seen.tried, ['a']);
          if (!row.keep) assert.ok(isSwitchyardError(seen.error), String(seen.error));
          break;
        case 'hedge':
          assert.deepEqual([seen.tried, from, seen.hedges], [['a', 'b'], 'b', { won: 1, lost: 0 }]);
          break;
        case 'wait':
          assert.deepEqual([seen.tried, from, seen.hedges], [['a'], 'a', { won: 0, lost: 0 }]);
          break;
        case 'skip':
          assert.deepEqual([seen.tried, from], [['b'], 'b']);
          break;
      }
      // Effects on origin a.
      const reported = seen.reports.filter((r) => / a( |$)/.test(r));
      if (row.on === 'slow' || row.on === 'capped') {
        // Not an outcome of its own: a capped origin is never tried; a slow one is judged by its answer.
      } else if (row.health) assert.ok(reported.length > 0, `health hears of it: ${seen.reports}`);
      else assert.deepEqual(reported, [], 'health hears nothing');
      assert.equal(seen.benchedA, row.bench || row.on === 'capped', 'benched');
      if (row.on !== 'slow' && row.on !== 'capped') {
        const score = seen.scoreA;
        if (row.score === 'none') assert.equal(score, undefined);
        else if (row.score === 'ok') assert.ok((score?.answered ?? 0) > 0);
        else if (row.score === 'error') assert.ok((score?.error_ratio ?? 0) > 0);
        else assert.ok((score?.throttle_ratio ?? 0) > 0);
      }
      if (row.keep)
        assert.equal(seen.answer?.reply.note, 'rate limited', 'the answer that came with it passes through');
    });
  }
});

describe('what the spec asks of the table', () => {
  const failures: FailsafeEvent[] = ['connect', 'timeout', 'network', 'status', 'garbled', 'throttled', 'busy'];

  it('every failure has a rule for reads and for writes; every answer event one for reads', () => {
    for (const event of failures) for (const calls of ['read', 'write'] as const) ruleFor(event, calls);
    for (const event of [
      'answer',
      'missing',
      'bad',
      'behind',
      'behind-again',
      'partly-throttled',
      'slow',
      'capped',
    ] as const) {
      ruleFor(event, 'read');
    }
  });

  it('a write goes to another origin only after a connect failure, and is never hedged', () => {
    for (const event of failures) {
      const then = ruleFor(event, 'write').then;
      assert.equal(then, event === 'connect' ? 'next' : 'stop', `${event} on a write`);
    }
    assert.notEqual(ruleFor('slow', 'write').then, 'hedge');
  });

  it('an answer other than asked (SPEC §20) sends a read on to the next origin and counts against its score', () => {
    const rule = ruleFor('bad', 'read');
    assert.deepEqual([rule.then, rule.score], ['fallback-next', 'error']);
  });

  it('an answer that fails verification (SPEC §18) goes to the next origin and is struck; no anchor blames nobody', () => {
    const unverified = ruleFor('unverified', 'read');
    assert.deepEqual([unverified.then, unverified.score, unverified.keep], ['next', 'error', false]);
    const unanchored = ruleFor('unanchored', 'read');
    assert.deepEqual([unanchored.then, unanchored.score, unanchored.health], ['stop', 'none', false]);
  });

  it("throttling and the gateway's own capacity never count against an origin's health", () => {
    // (A batch partly answered with rate-limit errors did answer: that is a success for its health.)
    for (const calls of ['read', 'write'] as const) {
      for (const event of ['throttled', 'busy', 'capped'] as const) {
        const rule = ruleFor(event, calls);
        assert.equal(rule.health, false, `${event} on a ${calls} reaches health`);
        assert.notEqual(rule.score, 'error', `${event} on a ${calls} is not an error`);
      }
    }
    assert.notEqual(ruleFor('partly-throttled', 'read').score, 'error');
  });
});
