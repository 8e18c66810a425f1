/**
 * Daily quotas of gateway keys counted across every worker and instance (SPEC §11): the `QuotaCounter`
 * port answered from chunks of a key's day reserved from a `QuotaBackend` (Redis, or the control
 * process), so `spend` stays synchronous and never waits for a round trip.
 *
 * Per key and UTC day this process holds calls it reserved. A call spends them; when they fall below
 * half a chunk one reserve goes out (one in flight per key; the reserves of one event-loop turn go as one
 * batch) for a chunk minus what is held, plus what was spent on credit. The chunk starts at
 * max(1, ⌈quota / 1000⌉) and doubles (up to ⌈quota / 50⌉) when calls had to run on credit and the
 * backend granted in full. While the backend has not said the day is used up, a call beyond the held
 * calls is admitted on credit (counted, reserved by the next ask): a key is never refused because a
 * round trip is in flight. The backend grants at most the quota; a grant that leaves nothing (or a
 * short one) means the day is used up: from then on calls beyond the held ones are refused (KEY_QUOTA_EXCEEDED, Retry-After to 00:00 UTC)
 * until the next UTC day or a higher quota for the key.
 *
 * Bounds per key and day, n processes serving it:
 * - over-admission: the calls admitted on credit by each process during its last round trip before the
 *   backend said "used up" (credit not covered by the grant) — at the rate the key's calls arrive, one
 *   round trip's worth per process; none when no reserve is in flight as the day runs out. Counted in
 *   `switchyard_limits_quota_overrun_total`.
 * - under-admission: calls reserved but not spent by the end of the day, ≤ n × the chunk (≤ n·⌈quota/50⌉;
 *   for a key spending steadily through one process, ≤ ⌈quota/1000⌉ until it outruns the round trips).
 *
 * Fail open (shared-status.ts): while the backend is unreachable, `fallback` (this process's own
 * counter) decides, logged once per outage, counted in the fallback metric; one reserve per second
 * probes for the backend's return.
 */
import { utcDay } from '../../model/gateway-keys.js';
import { type QuotaCounter, quotaExceeded } from './quota.js';
import type { QuotaAsk, QuotaBackend, QuotaGrant } from './quota-backend.js';
import type { SharedLimitsStatus } from './shared-status.js';
import { TurnBatch } from './turn-batch.js';

const MAX_KEYS = 100_000;

interface Reserved {
  readonly date: string;
  /** Reserved and not spent. */
  calls: number;
  /** Admitted on credit, to be reserved by the next ask. */
  owed: number;
  chunk: number;
  /** The quota the backend said is used up (a new quota for the key asks again). */
  exhaustedAt: number | undefined;
  /** Calls ran on credit since the last grant. */
  starved: boolean;
  asking: boolean;
}

interface PendingReserve {
  reserved: Reserved;
  ask: QuotaAsk;
}

/** The first chunk of a key's day: a thousandth of the quota, at least one call. */
export function quotaChunk(dailyQuota: number): number {
  return Math.max(1, Math.ceil(dailyQuota / 1000));
}

function maxQuotaChunk(dailyQuota: number): number {
  return Math.max(quotaChunk(dailyQuota), Math.ceil(dailyQuota / 50));
}

export interface LeasedQuotaOptions {
  backend: QuotaBackend;
  status: SharedLimitsStatus;
  /** Decides while the backend is unreachable: this process's own counter. */
  fallback: QuotaCounter;
}

export class LeasedQuotaCounter implements QuotaCounter {
  readonly #backend: QuotaBackend;
  readonly #status: SharedLimitsStatus;
  readonly #fallback: QuotaCounter;
  readonly #keys = new Map<string, Reserved>();
  readonly #batch: TurnBatch<QuotaAsk, PendingReserve, QuotaGrant>;

  constructor(options: LeasedQuotaOptions) {
    this.#backend = options.backend;
    this.#status = options.status;
    this.#batch = new TurnBatch(
      (asks) => this.#status.settle(this.#backend.reserve(asks)),
      (pending, grant) => {
        if (grant === undefined) pending.reserved.asking = false;
        else {
          const overrun = receive(pending, grant);
          if (overrun > 0) this.#status.overran(overrun);
        }
      },
    );
    this.#fallback = options.fallback;
  }

  spend(keyId: string, dailyQuota: number, cost: number, now: number): void {
    const reserved = this.#reservedFor(keyId, utcDay(now), dailyQuota);
    if (this.#status.down) {
      this.#status.fellBack();
      if (!reserved.asking && this.#status.probeDue()) this.#ask(keyId, reserved, dailyQuota);
      this.#fallback.spend(keyId, dailyQuota, cost, now);
      return;
    }
    if (reserved.exhaustedAt === dailyQuota && reserved.calls < cost) throw quotaExceeded(dailyQuota, now);
    if (reserved.calls >= cost) reserved.calls -= cost;
    else {
      reserved.owed += cost - reserved.calls;
      reserved.calls = 0;
      reserved.starved = true;
    }
    if (
      !reserved.asking &&
      reserved.exhaustedAt !== dailyQuota &&
      (reserved.owed > 0 || reserved.calls < reserved.chunk / 2)
    ) {
      this.#ask(keyId, reserved, dailyQuota);
    }
  }

  #reservedFor(keyId: string, date: string, dailyQuota: number): Reserved {
    let reserved = this.#keys.get(keyId);
    if (reserved === undefined || reserved.date !== date) {
      reserved = {
        date,
        calls: 0,
        owed: 0,
        chunk: quotaChunk(dailyQuota),
        exhaustedAt: undefined,
        starved: false,
        asking: false,
      };
    }
    this.#keys.delete(keyId);
    this.#keys.set(keyId, reserved);
    if (this.#keys.size > MAX_KEYS) {
      const oldest = this.#keys.keys().next().value;
      if (oldest !== undefined) this.#keys.delete(oldest);
    }
    return reserved;
  }

  #ask(keyId: string, reserved: Reserved, dailyQuota: number): void {
    reserved.asking = true;
    const want = Math.max(1, Math.ceil(Math.max(0, reserved.chunk - reserved.calls) + reserved.owed));
    const ask = { key: keyId, date: reserved.date, quota: dailyQuota, want };
    this.#batch.add(ask, { reserved, ask });
  }
}

/**
 * Applies a grant: cover the credit, keep the rest; a short grant, or none left, means the day is used
 * up. Answers the calls admitted on credit that the day could not cover (admitted beyond the quota).
 */
function receive({ reserved, ask }: PendingReserve, { granted, left }: QuotaGrant): number {
  reserved.asking = false;
  const covered = Math.min(reserved.owed, granted);
  reserved.owed -= covered;
  reserved.calls += granted - covered;
  if (granted < ask.want || left === 0) {
    reserved.exhaustedAt = ask.quota;
    // Credit the backend could not cover was admitted beyond the quota (the bound in the header).
    const overrun = reserved.owed;
    reserved.owed = 0;
    reserved.starved = false;
    return overrun;
  }
  if (reserved.starved) reserved.chunk = Math.min(maxQuotaChunk(ask.quota), reserved.chunk * 2);
  reserved.starved = false;
  return 0;
}
