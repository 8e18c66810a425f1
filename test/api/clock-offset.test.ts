/**
 * A running gateway checks its clock against the store's (src/store/clock-offset.ts): on PostgreSQL an
 * instance whose clock runs 5 s ahead logs the warning at start and shows the offset in `/metrics`; on
 * SQLite (one machine, one clock) the gauge has no sample.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { offsetClock } from '../../src/clock.js';
import { createLogger } from '../../src/log.js';
import { send } from '../helpers/http.js';
import { testBackend } from '../helpers/store.js';
import { type ApiFixture, startApiFixture } from './setup.js';

describe("a gateway whose clock runs 5 s ahead of the store's", () => {
  let f: ApiFixture;
  const lines: Array<{ level: string; msg: string; part?: string; offset_ms?: number }> = [];

  before(async () => {
    f = await startApiFixture(
      {},
      {
        clock: offsetClock(5_000),
        logger: createLogger({ level: 'warn', write: (line) => lines.push(JSON.parse(line)) }),
      },
    );
  });
  after(() => f?.close());

  test(
    testBackend() === 'postgres'
      ? 'on PostgreSQL: a warning at start, and the offset in /metrics'
      : 'on SQLite: no check, no sample',
    async () => {
      const metrics = (await send(f.app.apiUrl.replace(/\/client\/v4$/, '/metrics'), { method: 'GET' })).text;
      const sample = /^switchyard_clock_offset_seconds (\S+)$/m.exec(metrics)?.[1];
      const warnings = lines.filter((line) => /clock differs from the store's/.test(line.msg));
      if (testBackend() === 'sqlite') {
        assert.equal(sample, undefined);
        assert.equal(warnings.length, 0);
        return;
      }
      assert.ok(Math.abs(Number(sample) - 5) < 0.5, `gauge ${sample}`);
      assert.equal(warnings.length, 1, JSON.stringify(lines));
      assert.equal(warnings[0]?.part, 'store');
      assert.ok(Math.abs((warnings[0]?.offset_ms ?? 0) - 5_000) < 500);
    },
  );
});
