import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SwitchyardError } from '../../errors/base.js';
import { LocalQuotaCounter, quotaExceeded } from './quota.js';

const NOON = Date.parse('2026-03-01T12:00:00Z');

function refusal(fn: () => void): SwitchyardError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    return err;
  }
  assert.fail('expected a refusal');
}

describe('LocalQuotaCounter', () => {
  it('admits calls up to the daily quota, then refuses with 429 / -32005 and Retry-After to 00:00 UTC', () => {
    const quota = new LocalQuotaCounter();
    quota.spend('k', 5, 3, NOON);
    quota.spend('k', 5, 2, NOON);
    const err = refusal(() => quota.spend('k', 5, 1, NOON));
    assert.equal(err.code, 'KEY_QUOTA_EXCEEDED');
    assert.equal(err.httpStatus, 429);
    assert.equal(err.spec.rpc, -32005);
    assert.equal(err.headers['retry-after'], String(12 * 3600));
  });

  it('refuses a batch that does not fit whole and spends nothing of it', () => {
    const quota = new LocalQuotaCounter();
    quota.spend('k', 5, 4, NOON);
    refusal(() => quota.spend('k', 5, 2, NOON));
    quota.spend('k', 5, 1, NOON);
  });

  it('counts each key on its own', () => {
    const quota = new LocalQuotaCounter();
    quota.spend('a', 1, 1, NOON);
    quota.spend('b', 1, 1, NOON);
    refusal(() => quota.spend('a', 1, 1, NOON));
  });

  it('starts again at 00:00 UTC', () => {
    const quota = new LocalQuotaCounter();
    const lastSecond = Date.parse('2026-03-01T23:59:59.500Z');
    quota.spend('k', 1, 1, lastSecond);
    const err = refusal(() => quota.spend('k', 1, 1, lastSecond));
    assert.equal(err.headers['retry-after'], '1');
    quota.spend('k', 1, 1, Date.parse('2026-03-02T00:00:00Z'));
  });

  it('observe raises the count to what the store knows of today, never lowers it, ignores other days', () => {
    const quota = new LocalQuotaCounter();
    quota.spend('k', 10, 2, NOON);
    quota.observe('2026-03-01', new Map([['k', 8]]));
    refusal(() => quota.spend('k', 10, 3, NOON));
    quota.observe('2026-03-01', new Map([['k', 1]]));
    quota.spend('k', 10, 2, NOON);
    refusal(() => quota.spend('k', 10, 1, NOON)); // 8 + 2: the lower total did not lower the count
    quota.observe('2026-02-28', new Map([['other', 100]]));
    quota.spend('other', 10, 10, NOON);
  });

  it('Retry-After is at least 1 s', () => {
    assert.equal(quotaExceeded(1, Date.parse('2026-03-01T23:59:59.999Z')).headers['retry-after'], '1');
  });
});
