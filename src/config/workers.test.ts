import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { test } from 'node:test';
import { buildConfig } from './load.js';

test('gateway.workers defaults to 1, takes a number, and auto means os.availableParallelism()', () => {
  assert.equal(buildConfig({}, 'x').gateway.workers, 1);
  assert.equal(buildConfig({ gateway: { workers: 4 } }, 'x').gateway.workers, 4);
  assert.equal(buildConfig({ gateway: { workers: 'auto' } }, 'x').gateway.workers, availableParallelism());
});

test('gateway.workers refuses 0, fractions and other words, naming the key', () => {
  for (const workers of [0, 1.5, 'all', -2]) {
    assert.throws(() => buildConfig({ gateway: { workers } }, 'x'), /gateway\.workers/);
  }
});
