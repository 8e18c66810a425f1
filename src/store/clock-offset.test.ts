/**
 * The clock offset check against a real store: on PostgreSQL (the test pass with
 * SWITCHYARD_TEST_DATABASE_URL) a clock in step measures near 0, one set 5 s ahead measures ~5 s and
 * warns once, and back in step it says so; on SQLite nothing is measured.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openTestStore, testBackend } from '../../test/helpers/store.js';
import { type Clock, offsetClock } from '../clock.js';
import { createLogger } from '../log.js';
import { MetricsRegistry } from '../metrics/registry.js';
import { ClockOffsetCheck } from './clock-offset.js';
import type { Store } from './database.js';

describe('clock offset check', () => {
  let store: Store;
  let close: () => Promise<void>;
  before(async () => {
    ({ store, close } = await openTestStore());
  });
  after(() => close());

  function checker(clock: Clock) {
    const lines: Array<{ level: string; msg: string; offset_ms?: number }> = [];
    const metrics = new MetricsRegistry();
    const logger = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line)) });
    const check = new ClockOffsetCheck({ store, clock, logger, metrics });
    const gauge = () => /^switchyard_clock_offset_seconds (\S+)$/m.exec(metrics.render())?.[1];
    return { check, lines, gauge };
  }

  test('on PostgreSQL: near 0 in step, ~5 s and one warning when 5 s ahead, an info line back in step', {
    skip: testBackend() === 'postgres' ? false : 'PostgreSQL pass only (SQLite shares this machine’s clock)',
  }, async () => {
    let aheadMs = 0;
    const { check, lines, gauge } = checker({ now: () => Date.now() + aheadMs, monotonic: () => performance.now() });
    await check.start();
    try {
      assert.ok(Math.abs(check.offsetMs ?? Number.NaN) < 500, `in step: ${check.offsetMs} ms`);
      assert.ok(Math.abs(Number(gauge())) < 0.5, `gauge ${gauge()}`);
      assert.equal(lines.length, 0, 'no warning in step');

      aheadMs = 5_000;
      await check.check();
      await check.check();
      assert.ok(Math.abs((check.offsetMs ?? 0) - 5_000) < 500, `5 s ahead: ${check.offsetMs} ms`);
      assert.ok(Math.abs(Number(gauge()) - 5) < 0.5, `gauge ${gauge()}`);
      const warnings = lines.filter((line) => line.level === 'warn');
      assert.equal(warnings.length, 1, 'warned once over two checks');
      assert.match(warnings[0]?.msg ?? '', /clock differs from the store's/);
      assert.ok(Math.abs((warnings[0]?.offset_ms ?? 0) - 5_000) < 500);

      aheadMs = 0;
      await check.check();
      assert.equal(lines.length, 2);
      assert.equal(lines[1]?.level, 'info');
      assert.match(lines[1]?.msg ?? '', /agrees with the store's again/);
    } finally {
      await check.stop();
    }
  });

  test('on SQLite: nothing measured, no sample', {
    skip: testBackend() === 'sqlite' ? false : 'SQLite pass only',
  }, async () => {
    const { check, lines, gauge } = checker(offsetClock(5_000));
    await check.start();
    await check.stop();
    assert.equal(check.offsetMs, undefined);
    assert.equal(gauge(), undefined);
    assert.deepEqual(lines, []);
  });
});
