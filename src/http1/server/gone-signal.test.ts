import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClientGone, type ClientSignal } from './gone-signal.js';

test('ClientGone runs each listener still registered once, when the client leaves', () => {
  const gone = new ClientGone();
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

test('an AbortSignal is a ClientSignal (forwarding accepts either)', () => {
  const controller = new AbortController();
  const signal: ClientSignal = controller.signal;
  let fired = 0;
  signal.addEventListener('abort', () => {
    fired += 1;
  });
  controller.abort();
  assert.equal(signal.aborted, true);
  assert.equal(fired, 1);
});
