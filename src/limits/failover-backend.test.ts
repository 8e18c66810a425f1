import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../clock.js';
import { LocalQuotaCounter } from '../gateway/rpc/quota.js';
import type { QuotaAsk, QuotaBackend, QuotaGrant } from '../gateway/rpc/quota-backend.js';
import { SharedLimitsStatus } from '../gateway/rpc/shared-status.js';
import { createLogger } from '../log.js';
import { MetricsRegistry } from '../metrics/registry.js';
import { failoverLeases, failoverQuotas } from './failover-backend.js';
import { LocalLeaseBackend, LocalQuotaBackend } from './local-backend.js';

/** A shared backend that can be switched off (it rejects, as an unreachable Redis does); counts its asks. */
class Switchable implements QuotaBackend {
  up = true;
  asked = 0;
  readonly inner = new LocalQuotaBackend();
  async reserve(asks: readonly QuotaAsk[]): Promise<QuotaGrant[]> {
    this.asked += 1;
    if (!this.up) throw new Error('connect ECONNREFUSED');
    return this.inner.reserve(asks);
  }
}

describe('failover backends (a control process with Redis)', () => {
  test('Redis down: this instance’s own counts answer, from what it knew; logged once; one probe a second; back: Redis again', async () => {
    const clock = new ManualClock('2026-05-10T12:00:00Z');
    const lines: string[] = [];
    const metrics = new MetricsRegistry();
    const logger = createLogger({ level: 'info', write: (line) => lines.push(line) });
    const status = new SharedLimitsStatus({ backend: 'redis', clock, logger, metrics });
    const shared = new Switchable();
    const counts = new LocalQuotaCounter(); // the instance's: the store's usage, and what Redis answered
    counts.observe('2026-05-10', new Map([['k', 40]]));
    const quotas = failoverQuotas(shared, new LocalQuotaBackend(counts), status, counts);
    const ask = { key: 'k', date: '2026-05-10', quota: 100, want: 10 };
    shared.inner.reserveNow([{ ...ask, want: 70 }]); // another instance
    assert.deepEqual(await quotas.reserve([ask]), [{ granted: 10, left: 20 }], 'Redis answers');
    assert.equal(counts.spent('2026-05-10', 'k'), 80, 'what Redis counted is known to the instance');
    shared.up = false;
    assert.deepEqual(await quotas.reserve([ask]), [{ granted: 10, left: 10 }], 'local, from what was known (80)');
    assert.match(metrics.render(), /^switchyard_limits_backend_up\{backend="redis"\} 0$/m);
    const warnings = lines.filter((line) => line.includes('"level":"warn"'));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] as string, /failing open/);
    assert.match(warnings[0] as string, /"fails":"open"/);
    const asked = shared.asked;
    await quotas.reserve([ask]);
    assert.equal(shared.asked, asked, 'no ask to Redis within the probe interval');
    assert.match(metrics.render(), /^switchyard_limits_fallback_total\{backend="redis"\} 2$/m);
    shared.up = true;
    clock.advance(1_000);
    assert.deepEqual(await quotas.reserve([ask]), [{ granted: 10, left: 10 }], 'the probe finds Redis back');
    assert.match(metrics.render(), /^switchyard_limits_backend_up\{backend="redis"\} 1$/m);
    assert.equal(lines.filter((line) => line.includes('"level":"warn"')).length, 1);

    const leases = failoverLeases(
      { lease: async () => Promise.reject(new Error('connect ECONNREFUSED')) },
      new LocalLeaseBackend(clock),
      status,
    );
    assert.deepEqual(await leases.lease([{ bucket: 'b', spec: { requests_per_second: 1, burst: 5 }, want: 3 }]), [3]);
    assert.match(metrics.render(), /^switchyard_limits_backend_up\{backend="redis"\} 0$/m);
  });
});
