/**
 * Rate-limit leases and daily-quota reserves across gateway workers (SPEC §11, PLAN-17 parts L and W).
 *
 * Worker side: `IpcLeaseBackend` is a LeaseBackend (gateway/rpc/lease-backend.ts) that asks the control
 * process, bounded by LEASE_TIMEOUT_MS (1 s, the limiter's own deadline: a control busy for a moment is
 * no outage, and a reply that arrived while this worker was busy still counts — control-link.ts). It
 * rejects when the control does not answer in time or its own backend failed, so a leased limiter over
 * it (gateway/rpc/leased-limiter.ts) fails open to local buckets — never "nothing granted", which would refuse
 * calls for an outage. (With Redis, the control answers from its own buckets while Redis is down:
 * limits/failover-backend.ts.)
 *
 * `IpcQuotaBackend` is the same for QuotaBackend (gateway/rpc/quota-backend.ts): reserves of a key's
 * day asked of the control's quota backend, bounded by LEASE_TIMEOUT_MS, rejecting likewise.
 *
 * Control side: the control process answers every worker's asks from one backend, so the workers of
 * one instance share each bucket and each key's day: limits/local-backend.ts without Redis, Redis's
 * (limits/redis-backend.ts, failing over to the local ones) with `redis_url` (cluster/control.ts
 * `leases`, `quotas`).
 */
import type { LeaseAsk, LeaseBackend } from '../gateway/rpc/lease-backend.js';
import type { QuotaAsk, QuotaBackend, QuotaGrant } from '../gateway/rpc/quota-backend.js';
import type { ControlLink } from './control-link.js';

export const LEASE_TIMEOUT_MS = 1000;

export class IpcLeaseBackend implements LeaseBackend {
  readonly #link: ControlLink;

  constructor(link: ControlLink) {
    this.#link = link;
  }

  async lease(asks: readonly LeaseAsk[]): Promise<number[]> {
    const granted = await this.#link.request({ kind: 'lease', asks: [...asks] }, LEASE_TIMEOUT_MS);
    return checked(granted, asks);
  }
}

export class IpcQuotaBackend implements QuotaBackend {
  readonly #link: ControlLink;

  constructor(link: ControlLink) {
    this.#link = link;
  }

  async reserve(asks: readonly QuotaAsk[]): Promise<QuotaGrant[]> {
    const grants = await this.#link.request({ kind: 'quota', asks: [...asks] }, LEASE_TIMEOUT_MS);
    if (!Array.isArray(grants) || grants.length !== asks.length) throw new Error('garbled answer from the control');
    return grants.map((grant: Partial<QuotaGrant> | null, i) => {
      const [granted] = checked([grant?.granted], [asks[i] ?? { want: 0 }]);
      return { granted: granted ?? 0, left: Math.max(0, Number(grant?.left) || 0) };
    });
  }
}

/** The control's answer as grants: one per ask, each within [0, want]; anything else is garbled. */
function checked(granted: unknown, asks: readonly { want: number }[]): number[] {
  if (!Array.isArray(granted) || granted.length !== asks.length) throw new Error('garbled answer from the control');
  return granted.map((value, i) => Math.max(0, Math.min(Number(value) || 0, asks[i]?.want ?? 0)));
}
