import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../clock.js';
import { grantFrom, msUntilFull } from './bucket.js';
import { LocalLeaseBackend, LocalQuotaBackend } from './local-backend.js';

describe('bucket math', () => {
  test('a new bucket is full; it refills by elapsed time up to the burst; grants whole tokens it holds', () => {
    const spec = { requests_per_second: 10, burst: 5 };
    const first = grantFrom(undefined, spec, 3, 1_000);
    assert.equal(first.granted, 3);
    assert.deepEqual(first.state, { tokens: 2, at: 1_000 });
    const second = grantFrom(first.state, spec, 100, 1_150);
    assert.equal(second.granted, 3, '2 left + 1.5 refilled in 150 ms: 3 whole tokens');
    assert.equal(second.state.tokens, 0.5, 'the fraction stays in the bucket');
    const later = grantFrom(second.state, spec, 100, 60_000);
    assert.equal(later.granted, 5, 'capped at the burst');
    const backwards = grantFrom({ tokens: 1, at: 2_000 }, spec, 100, 1_000);
    assert.equal(backwards.granted, 1, 'a clock going back refills nothing');
    assert.equal(msUntilFull(2, spec), 300);
  });
});

describe('LocalLeaseBackend', () => {
  test('over t seconds it grants at most burst + rate × t per bucket, whatever the asks', async () => {
    const clock = new ManualClock(0);
    const backend = new LocalLeaseBackend(clock);
    let granted = 0;
    for (let ms = 0; ms <= 10_000; ms += 7) {
      clock.set(ms);
      const spec = { requests_per_second: 50, burst: 20 };
      const [a = 0, b = 0] = await backend.lease([
        { bucket: 'x', spec, want: 3 },
        { bucket: 'x', spec, want: 1 },
      ]);
      granted += a + b;
    }
    assert.ok(granted <= 20 + 50 * 10 + 1e-9 && granted >= 20 + 50 * 10 - 1, `granted ${granted}`);
  });
});

describe('LocalQuotaBackend', () => {
  test('grants whole calls up to the quota per key and day, and keeps only the two newest days', () => {
    const backend = new LocalQuotaBackend();
    const day = { key: 'k', date: '2026-11-24', quota: 5 };
    assert.deepEqual(
      backend.reserveNow([
        { ...day, want: 3.7 },
        { ...day, want: 4 },
      ]),
      [
        { granted: 3, left: 2 },
        { granted: 2, left: 0 },
      ],
    );
    assert.deepEqual(backend.reserveNow([{ ...day, date: '2026-11-25', want: 4 }]), [{ granted: 4, left: 1 }]);
    assert.deepEqual(backend.reserveNow([{ ...day, date: '2026-11-26', want: 1 }]), [{ granted: 1, left: 4 }]);
    // 2026-11-24 was dropped (older than the two newest days): asked again, it starts afresh.
    assert.deepEqual(backend.reserveNow([{ ...day, want: 5 }]), [{ granted: 5, left: 0 }]);
  });
});
