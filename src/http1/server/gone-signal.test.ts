import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GoneSignal } from './gone-signal.js';

test('GoneSignal runs each listener still registered once, when the client leaves', () => {
  const gone = new GoneSignal();
  const calls: string[] = [];
  const a = (): void => {
    calls.push('a');
  };
  const b = (): void => {
    calls.push('b');
  };
  gone.addEventListener('abort', a);
  gone.addEventListener('abort', b, { once: true });
  gone.removeEventListener('abort', a);
  assert.equal(gone.aborted, false);
  gone.abort();
  gone.abort();
  assert.equal(gone.aborted, true);
  assert.deepEqual(calls, ['b']);
  gone.addEventListener('abort', a); // too late: the client is already gone; callers check `aborted`
  assert.deepEqual(calls, ['b']);
});
