import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClientSignal } from './forwarder.js';

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
