import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../clock.js';
import type { HealthView } from '../model/health-view.js';
import { OriginFeedback } from './feedback.js';
import type { Candidate } from './router.js';
import { poolFromConfig } from './static-directory.js';

const pool = poolFromConfig(
  { name: 'p', origins: [{ name: 'a', address: 'http://127.0.0.1:1/' }] },
  '0123456789abcdef0123456789abcdef',
  '2026-01-01T00:00:00.000Z',
);
const candidate = { pool, origin: pool.origins[0] } as Candidate;

function setup() {
  const clock = new ManualClock('2026-01-01T00:00:00.000Z');
  const reports: string[] = [];
  const health: HealthView = {
    originHealthy: () => true,
    poolHealthy: () => true,
    reportFailure: (_pool, origin, reason, kind) => reports.push(`fail ${origin} ${kind}: ${reason}`),
    reportSuccess: (_pool, origin) => reports.push(`ok ${origin}`),
  };
  return { clock, reports, feedback: new OriginFeedback(health, clock, 5_000) };
}

describe('OriginFeedback: one input, two meanings', () => {
  it('a failed connect demotes the origin for a moment and reaches the HealthView', () => {
    const { clock, reports, feedback } = setup();
    feedback.failed(candidate, 'connect', 'cannot connect (ECONNREFUSED)');
    assert.deepEqual(reports, ['fail a connect: cannot connect (ECONNREFUSED)']);
    assert.equal(feedback.demotion.isDemoted(pool.id, 'a'), true);
    clock.advance(5_000);
    assert.equal(feedback.demotion.isDemoted(pool.id, 'a'), false);
  });

  it('a timeout or broken connection reaches the HealthView without demotion', () => {
    const { reports, feedback } = setup();
    feedback.failed(candidate, 'timeout', 'no answer within 100 ms');
    feedback.failed(candidate, 'network', 'connection failed (ECONNRESET)');
    assert.deepEqual(reports, [
      'fail a timeout: no answer within 100 ms',
      'fail a network: connection failed (ECONNRESET)',
    ]);
    assert.equal(feedback.demotion.isDemoted(pool.id, 'a'), false);
  });

  it('an HTTP failure status or garbled answer is neither demoted nor reported; an answer is a success', () => {
    const { reports, feedback } = setup();
    feedback.failed(candidate, 'status', 'HTTP 500');
    feedback.failed(candidate, 'garbled', 'empty body');
    feedback.succeeded(candidate);
    assert.deepEqual(reports, ['ok a']);
    assert.equal(feedback.demotion.isDemoted(pool.id, 'a'), false);
  });
});
