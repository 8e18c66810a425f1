import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backoffOf, RATE_LIMIT_ANSWERS, rateLimitAnswer } from './rate-limit-answers.js';
import { retryAfterMs } from './retry-after.js';

describe("providers' rate-limit answers", () => {
  it('every row matches its own message (and code, where it names one)', () => {
    for (const row of RATE_LIMIT_ANSWERS) {
      const code = row.codes?.[0] ?? -32000;
      const message = `${row.message.toUpperCase()} (more words)`;
      assert.equal(rateLimitAnswer({ code, message }), row, row.message);
      if (row.codes !== undefined) assert.equal(rateLimitAnswer({ code: 1234, message }), undefined, 'wrong code');
    }
  });

  it('never on a code alone, never a revert', () => {
    assert.equal(rateLimitAnswer({ code: -32005, message: 'query returned more than 10000 results' }), undefined);
    assert.equal(rateLimitAnswer({ code: 429 }), undefined);
    assert.equal(rateLimitAnswer({ code: 3, message: 'too many requests' }), undefined);
    assert.equal(rateLimitAnswer({ code: -32000, message: 'execution reverted: credits limited to 1/sec' }), undefined);
    assert.equal(
      rateLimitAnswer({ code: -32005, message: 'daily request count exceeded, request rate limited' })?.provider,
      'Infura',
    );
  });

  it("Infura's data.backoff_seconds is the wait asked for", () => {
    assert.equal(backoffOf({ data: { backoff_seconds: 30 } }), 30_000);
    assert.equal(backoffOf({ data: { backoff_seconds: 'soon' } }), undefined);
    assert.equal(backoffOf({}), undefined);
  });
});

describe('Retry-After', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  it('seconds or an HTTP date; a past date is 0; anything else is nothing', () => {
    assert.equal(retryAfterMs('120', now), 120_000);
    assert.equal(retryAfterMs(' 0 ', now), 0);
    assert.equal(retryAfterMs('Sun, 01 Mar 2026 12:00:30 GMT', now), 30_000);
    assert.equal(retryAfterMs('Sun, 01 Mar 2026 11:00:00 GMT', now), 0);
    assert.equal(retryAfterMs('soon', now), undefined);
    assert.equal(retryAfterMs('-5', now), undefined);
    assert.equal(retryAfterMs(undefined, now), undefined);
  });
});
