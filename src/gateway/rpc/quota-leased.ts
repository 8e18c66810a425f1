/**
 * Daily quotas of gateway keys counted across every worker and instance (SPEC §11, §20): the `QuotaCounter`
 * port answered from chunks of a key's day reserved from a `QuotaBackend` (Redis, or the control
 * process), so a call that fits what is held never waits for a round trip.
 *
 * Per key and UTC day this process holds calls it reserved. A call spends them; when they fall below
 * half a chunk one reserve goes out (one in flight per key; the reserves of one event-loop turn go as one
 * batch) for a chunk minus what is held, plus what was spent on credit, plus what waits. The chunk starts
 * at max(1, ⌈quota / 1000⌉) and doubles (up to ⌈quota / 50⌉) when calls outran it and the backend granted
 * in full. The backend grants at most the quota; a grant that leaves nothing (or a short one) means the
 * day is used up: from then on calls beyond the held ones are refused (KEY_QUOTA_EXCEEDED, Retry-After to
 * 00:00 UTC) until the next UTC day or a higher quota for the key. A request costing more than the whole
 * quota is refused at once.
 *
 * A call that does not fit what is held, while the day is not known to be used up:
 * - runs on credit when this process has no credit outstanding for the key and the call costs at most
 *   the credit line (⌈quota / 1000⌉, the first chunk): counted, reserved by the next ask — so a key's first
 *   call in a process does not wait;
 * - else waits (`admit`) for the reserve in flight, first come first served; the grant admits the waiting
 *   calls it covers and, when the day is used up, refuses the rest. A wait is bounded by the backend's
 *   deadline (shared-status.ts, 1 s): a failed reserve hands the waiting calls to the fallback.
 *   `spend`, for callers that cannot wait, refuses such a call as RATE_LIMITED with Retry-After: 1
 *   instead (the reserve it started is on its way: the retry fits).
 *
 * Bounds per key and day, n processes serving it (SPEC §20):
 * - over-admission: only calls run on credit that the backend could not cover — at most one request per
 *   process, each at most the credit line: ≤ n · min(largest batch, ⌈quota / 1000⌉), which is within
 *   min(n × largest batch, max(10 % of the quota, 100)) for up to 100 processes. Counted in
 *   `switchyard_limits_quota_overrun_total`.
 * - under-admission: calls reserved but not spent by the end of the day, ≤ n × the chunk (≤ n·⌈quota/50⌉).
 *
 * Fail open (shared-status.ts): while the backend is unreachable, the calls this process holds are
 * spent first, then `fallback` (this process's own counter, which each grant raised to what every
 * process had reserved, and the store's usage seeds) decides — so an outage admits at most what was
 * left at the last grant per process; logged once per outage, counted in the fallback metric; one
 * reserve per second probes for the backend's return.
 */
import { SwitchyardError } from '../../errors/base.js';
import { utcDay } from '../../model/gateway-keys.js';
import { type LocalQuotaCounter, type QuotaCounter, quotaExceeded } from './quota.js';
import type { QuotaAsk, QuotaBackend, QuotaGrant } from './quota-backend.js';
import type { SharedLimitsStatus } from './shared-status.js';
import { TurnBatch } from './turn-batch.js';

const MAX_KEYS = 100_000;

/** A call waiting for the reserve in flight. */
interface QuotaWaiter {
  readonly cost: number;
  readonly now: number;
  readonly admitted: () => void;
  readonly refused: (err: unknown) => void;
}

interface Reserved {
  readonly key: string;
  readonly date: string;
  /** Reserved and not spent. */
  calls: number;
  /** Admitted on credit, to be reserved by the next ask. */
  owed: number;
  chunk: number;
  /** The quota the backend said is used up (a new quota for the key asks again). */
  exhaustedAt: number | undefined;
  /** Calls outran the held ones since the last grant. */
  starved: boolean;
  asking: boolean;
  /** The largest call `spend` refused for want of reserved calls since the last ask (the next covers it). */
  need: number;
  /** Calls waiting for the reserve in flight, in arrival order. */
  readonly waiting: QuotaWaiter[];
}

interface PendingReserve {
  reserved: Reserved;
  ask: QuotaAsk;
}

/** The first chunk of a key's day, and the most one call may run on credit: a thousandth of the quota, at least one call. */
export function quotaChunk(dailyQuota: number): number {
  return Math.max(1, Math.ceil(dailyQuota / 1000));
}

function maxQuotaChunk(dailyQuota: number): number {
  return Math.max(quotaChunk(dailyQuota), Math.ceil(dailyQuota / 50));
}

/** The refusal `spend` answers where `admit` would wait: transient, the reserve is on its way. */
function reservePending(): SwitchyardError {
  return new SwitchyardError(
    'RATE_LIMITED',
    "This key's calls arrive faster than its daily quota is reserved for this process; retry after 1 s.",
    { headers: { 'retry-after': '1' }, details: { retry_after: 1 } },
  );
}

/** What decides while the backend is unreachable (quota.ts `LocalQuotaCounter`). */
export type QuotaFallback = Pick<LocalQuotaCounter, 'spend' | 'raise'>;

export interface LeasedQuotaOptions {
  backend: QuotaBackend;
  status: SharedLimitsStatus;
  /**
   * Decides while the backend is unreachable: this process's own counter, raised after each grant to
   * what every process has reserved (so an outage admits at most what was left at the last grant).
   */
  fallback: QuotaFallback;
}

export class LeasedQuotaCounter implements QuotaCounter {
  readonly #backend: QuotaBackend;
  readonly #status: SharedLimitsStatus;
  readonly #fallback: QuotaFallback;
  readonly #keys = new Map<string, Reserved>();
  readonly #batch: TurnBatch<QuotaAsk, PendingReserve, QuotaGrant>;

  constructor(options: LeasedQuotaOptions) {
    this.#backend = options.backend;
    this.#status = options.status;
    this.#fallback = options.fallback;
    this.#batch = new TurnBatch(
      (asks) => this.#status.settle(this.#backend.reserve(asks)),
      (pending, grant) => this.#received(pending, grant),
    );
  }

  spend(keyId: string, dailyQuota: number, cost: number, now: number): void {
    const reserved = this.#decide(keyId, dailyQuota, cost, now);
    if (reserved === undefined) return;
    // The retry fits once the reserve answers: it asks for this call too.
    reserved.need = Math.max(reserved.need, cost);
    if (!reserved.asking) this.#ask(reserved, dailyQuota);
    throw reservePending();
  }

  admit(keyId: string, dailyQuota: number, cost: number, now: number): void | Promise<void> {
    const reserved = this.#decide(keyId, dailyQuota, cost, now);
    if (reserved === undefined) return;
    const waited = new Promise<void>((admitted, refused) => reserved.waiting.push({ cost, now, admitted, refused }));
    if (!reserved.asking) this.#ask(reserved, dailyQuota);
    return waited;
  }

  /**
   * Admits the call now (undefined) or refuses it (throws); else answers its key's reservation: the
   * call must wait for a reserve.
   */
  #decide(keyId: string, dailyQuota: number, cost: number, now: number): Reserved | undefined {
    if (cost > dailyQuota) throw quotaExceeded(dailyQuota, now);
    const reserved = this.#reservedFor(keyId, utcDay(now), dailyQuota);
    if (this.#status.down) {
      this.#status.fellBack();
      if (!reserved.asking && this.#status.probeDue()) this.#ask(reserved, dailyQuota);
      // Calls reserved before the outage are certain; beyond them the fallback decides.
      if (reserved.calls >= cost) reserved.calls -= cost;
      else this.#fallback.spend(keyId, dailyQuota, cost, now);
      return undefined;
    }
    const queued = reserved.waiting.length > 0;
    if (!queued && reserved.calls >= cost) {
      reserved.calls -= cost;
      if (!reserved.asking && reserved.exhaustedAt !== dailyQuota && reserved.calls < reserved.chunk / 2) {
        this.#ask(reserved, dailyQuota);
      }
      return undefined;
    }
    if (reserved.exhaustedAt === dailyQuota) throw quotaExceeded(dailyQuota, now);
    reserved.starved = true;
    if (queued || reserved.owed > 0 || cost > quotaChunk(dailyQuota)) return reserved;
    // The one request on credit this process may have outstanding for the key (the bound in the header).
    reserved.owed = cost - reserved.calls;
    reserved.calls = 0;
    if (!reserved.asking) this.#ask(reserved, dailyQuota);
    return undefined;
  }

  #reservedFor(keyId: string, date: string, dailyQuota: number): Reserved {
    let reserved = this.#keys.get(keyId);
    if (reserved === undefined || reserved.date !== date) {
      reserved = {
        key: keyId,
        date,
        calls: 0,
        owed: 0,
        chunk: quotaChunk(dailyQuota),
        exhaustedAt: undefined,
        starved: false,
        asking: false,
        need: 0,
        waiting: [],
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

  /** Asks for a chunk beyond what is held (or what `spend` needed), the credit to cover and the waiting calls. */
  #ask(reserved: Reserved, dailyQuota: number): void {
    reserved.asking = true;
    const waiting = reserved.waiting.reduce((sum, waiter) => sum + waiter.cost, 0);
    const ahead = Math.max(0, Math.max(reserved.chunk, reserved.need) - reserved.calls);
    const want = Math.max(1, Math.ceil(ahead + reserved.owed + waiting));
    reserved.need = 0;
    const ask = { key: reserved.key, date: reserved.date, quota: dailyQuota, want };
    this.#batch.add(ask, { reserved, ask });
  }

  #received(pending: PendingReserve, grant: QuotaGrant | undefined): void {
    const { reserved, ask } = pending;
    reserved.asking = false;
    if (grant === undefined) {
      this.#fallBackWaiting(reserved, ask.quota);
      return;
    }
    const overrun = applyGrant(reserved, ask, grant);
    if (overrun > 0) this.#status.overran(overrun);
    // What every process has reserved: during an outage the fallback admits at most what was left.
    this.#fallback.raise(reserved.date, reserved.key, ask.quota - grant.left);
    if (reserved.exhaustedAt === ask.quota) {
      // Nothing more will come: each waiting call that fits what is held is admitted, the others refused.
      for (const waiter of reserved.waiting.splice(0)) {
        if (waiter.cost > reserved.calls) waiter.refused(quotaExceeded(ask.quota, waiter.now));
        else {
          reserved.calls -= waiter.cost;
          waiter.admitted();
        }
      }
      return;
    }
    // The waiting calls the grant covers go in arrival order; the others wait for the next reserve.
    while (reserved.waiting.length > 0 && (reserved.waiting[0] as QuotaWaiter).cost <= reserved.calls) {
      const waiter = reserved.waiting.shift() as QuotaWaiter;
      reserved.calls -= waiter.cost;
      waiter.admitted();
    }
    if (reserved.waiting.length > 0 || reserved.need > 0) this.#ask(reserved, ask.quota);
  }

  /** The reserve failed (the backend is down now): the waiting calls are decided by the fallback. */
  #fallBackWaiting(reserved: Reserved, dailyQuota: number): void {
    for (const waiter of reserved.waiting.splice(0)) {
      this.#status.fellBack();
      try {
        this.#fallback.spend(reserved.key, dailyQuota, waiter.cost, waiter.now);
        waiter.admitted();
      } catch (err) {
        waiter.refused(err);
      }
    }
  }
}

/**
 * Applies a grant: cover the credit, keep the rest; a short grant, or none left, means the day is used
 * up. Answers the calls admitted on credit that the day could not cover (admitted beyond the quota).
 */
function applyGrant(reserved: Reserved, ask: QuotaAsk, { granted, left }: QuotaGrant): number {
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
