/**
 * Rate-limit leases and daily-quota reserves across gateway workers (SPEC §11, PLAN-17 parts L and W).
 *
 * Worker side: `IpcLeaseBackend` is a LeaseBackend (gateway/rpc/lease-backend.ts) that asks the control
 * process, bounded by LEASE_TIMEOUT_MS (250 ms). It rejects when the control does not answer in time or
 * its own backend failed (e.g. Redis unreachable), so a leased limiter over it (part L's LeasedLimiter)
 * fails open to local buckets — never "nothing granted", which would refuse calls for an outage.
 *
 * `IpcQuotaBackend` is the same for QuotaBackend (gateway/rpc/quota-backend.ts): reserves of a key's
 * day asked of the control's quota backend, bounded by LEASE_TIMEOUT_MS, rejecting likewise.
 *
 * Control side: `ControlLeaseBuckets` answers every worker's asks from one set of token buckets in the
 * control process, so the workers of one instance share each bucket: refill `requests_per_second` per
 * second up to `burst`, grant min(want, whole tokens held). A bucket starts full (burst) and is dropped
 * after IDLE_MS (60 s) unused; at most MAX_BUCKETS (100 000), least recently used first out. With Redis
 * (part L), the control process asks Redis instead: pass that backend in its place.
 */
import type { Clock } from '../clock.js';
import type { LeaseAsk, LeaseBackend } from '../gateway/rpc/lease-backend.js';
import type { QuotaAsk, QuotaBackend } from '../gateway/rpc/quota-backend.js';
import type { ControlLink } from './control-link.js';

export const LEASE_TIMEOUT_MS = 250;
const IDLE_MS = 60_000;
const MAX_BUCKETS = 100_000;

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

  async reserve(asks: readonly QuotaAsk[]): Promise<number[]> {
    const granted = await this.#link.request({ kind: 'quota', asks: [...asks] }, LEASE_TIMEOUT_MS);
    return checked(granted, asks);
  }
}

/** The control's answer as grants: one per ask, each within [0, want]; anything else is garbled. */
function checked(granted: unknown, asks: readonly { want: number }[]): number[] {
  if (!Array.isArray(granted) || granted.length !== asks.length) throw new Error('garbled answer from the control');
  return granted.map((value, i) => Math.max(0, Math.min(Number(value) || 0, asks[i]?.want ?? 0)));
}

interface HeldBucket {
  tokens: number;
  /** ms, when `tokens` was last brought up to date */
  at: number;
}

export class ControlLeaseBuckets implements LeaseBackend {
  readonly #clock: Clock;
  readonly #buckets = new Map<string, HeldBucket>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  async lease(asks: readonly LeaseAsk[]): Promise<number[]> {
    return asks.map((ask) => this.grant(ask));
  }

  /** Grants up to `want` whole tokens of the bucket now. */
  grant(ask: LeaseAsk): number {
    const now = this.#clock.now();
    const { requests_per_second: rate, burst } = ask.spec;
    let bucket = this.#buckets.get(ask.bucket);
    if (bucket === undefined || now - bucket.at > IDLE_MS) {
      bucket = { tokens: burst, at: now };
    } else {
      bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * rate);
      bucket.at = now;
    }
    // Re-inserted: the map's order is the recency order the LRU bound drops from.
    this.#buckets.delete(ask.bucket);
    this.#buckets.set(ask.bucket, bucket);
    if (this.#buckets.size > MAX_BUCKETS) {
      const oldest = this.#buckets.keys().next().value;
      if (oldest !== undefined) this.#buckets.delete(oldest);
    }
    const granted = Math.max(0, Math.min(Math.floor(ask.want), Math.floor(bucket.tokens)));
    bucket.tokens -= granted;
    return granted;
  }
}
