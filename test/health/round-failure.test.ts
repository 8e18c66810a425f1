/**
 * A health round that fails on the store (here: the store closed under it) fails the caller of that
 * round and nothing else: no promise is left rejected without a handler, which in a server process
 * would end it (Node's default for unhandled rejections).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { withMonitorDefaults } from '../../src/model/monitor-schema.js';
import { openStore } from '../../src/store/database.js';
import { makePool, startHarness } from './harness.js';

test('a round that fails on the store rejects its caller and leaves no rejection unhandled', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-round-failure-'));
  const store = await openStore({ data_dir: dir });
  const harness = await startHarness({
    pools: [makePool('p', [{ name: 'a', address: 'http://127.0.0.1:1/' }])],
    monitors: { m1: withMonitorDefaults({ type: 'http', timeout: 1, retries: 0 }) },
    store,
  });
  const unhandled: unknown[] = [];
  const listener = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', listener);
  try {
    await store.close();
    await assert.rejects(harness.monitor.checkPool('p'), /destroyed/);
    // Unhandled rejections are reported once the microtasks of a turn have run: let two turns pass.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', listener);
    await harness.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
