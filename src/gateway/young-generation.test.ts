import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sizeYoungGeneration } from './young-generation.js';

test('the semi-space size is set from gateway.semi_space_mib, unless 0 or given on the command line', () => {
  const set: string[] = [];
  const record = (flags: string) => set.push(flags);
  assert.equal(sizeYoungGeneration(64, ['--enable-source-maps'], record), true);
  assert.deepEqual(set, ['--max-semi-space-size=64']);
  assert.equal(sizeYoungGeneration(0, [], record), false, '0 keeps V8 default');
  assert.equal(sizeYoungGeneration(64, ['--max-semi-space-size=32'], record), false, 'the command line wins');
  assert.equal(sizeYoungGeneration(64, ['', '--max-semi-space-size=8'], record), false, 'NODE_OPTIONS too');
  assert.equal(set.length, 1);
});
