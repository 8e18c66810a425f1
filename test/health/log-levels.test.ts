/**
 * Health changes in the log (SPEC §16): a transition to Unhealthy is a warning — what an operator must
 * see — and a recovery is info. A real node:http origin goes down and comes back; the monitor runs its
 * checks through `runOnce()` on a manual clock.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../src/log.js';
import { makePool, startHarness } from './harness.js';
import { TestOrigin } from './test-origin.js';

test('an origin (and its pool) turning Unhealthy is logged at warn; turning Healthy again at info', async () => {
  const origin = await TestOrigin.start();
  const lines: Array<Record<string, unknown>> = [];
  const h = await startHarness({
    pools: [makePool('p', [{ name: 'a', address: origin.url }])],
    monitors: { m1: { type: 'http', timeout: 1, retries: 0, interval: 5, consecutive_down: 1, consecutive_up: 1 } },
    extra: { logger: createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line)) }) },
  });
  try {
    for (const step of ['up', 'down', 'up'] as const) {
      if (step === 'down') await origin.down();
      else await origin.up();
      h.clock.advance(5_000);
      await h.monitor.runOnce();
    }
    const changes = lines
      .filter((line) => line.msg === 'health change')
      .map((line) => `${line.event_source} ${line.previous}->${line.new_health} ${line.level}`);
    assert.deepEqual(changes, [
      'origin Healthy->Unhealthy warn',
      'pool Healthy->Unhealthy warn',
      'origin Unhealthy->Healthy info',
      'pool Unhealthy->Healthy info',
    ]);
  } finally {
    await h.close();
    await origin.down();
  }
});
