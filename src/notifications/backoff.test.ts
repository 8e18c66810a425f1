import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RETRY_CAP_MS, RETRY_WINDOW_MS, retryDelayMs, retryWindowOver } from './backoff.js';

test('first retries within seconds, doubling, capped at an hour, jittered by ±20 %', () => {
  assert.deepEqual(
    [1, 2, 3, 4].map((n) => retryDelayMs(n, 0.5)),
    [4_000, 8_000, 16_000, 32_000],
  );
  assert.equal(retryDelayMs(50, 0.5), RETRY_CAP_MS);
  assert.equal(retryDelayMs(1, 0), 3_200);
  assert.equal(retryDelayMs(1, 0.999_999), 4_800);
  assert.equal(retryDelayMs(1, 0.5, 30_000), 30_000, 'Retry-After is a lower bound');
  assert.equal(retryDelayMs(1, 0.5, 10 * RETRY_CAP_MS), RETRY_CAP_MS, 'but never beyond the cap');
});

test('the retry window is at least 24 h', () => {
  assert.ok(RETRY_WINDOW_MS >= 24 * 3_600_000);
  assert.ok(!retryWindowOver(0, RETRY_WINDOW_MS - 1));
  assert.ok(retryWindowOver(0, RETRY_WINDOW_MS));
});
