/**
 * The resend memory (SPEC §17): the transactions an origin accepted in the last RESEND_MEMORY_MS (60 s),
 * by network and transaction hash, so the same raw transaction sent again is answered with its hash
 * from here, without reaching an origin (eth-send-raw-transaction.ts). Only accepted sends are kept (an
 * origin answered the hash, or showed it already had the transaction); a refused or failed send leaves
 * nothing. Each entry holds where the send went first (the client's read-your-writes home) and every
 * origin that accepted it.
 *
 * At most RESEND_MEMORY_MAX_ENTRIES (10 000) entries per gateway process, the oldest dropped first;
 * durations on the injected Clock's monotonic reading. With gateway workers each worker keeps its own
 * (a resend that lands on another worker reaches an origin, whose "already known" is answered as
 * success all the same).
 */
import type { Clock } from '../../../clock.js';
import type { Candidate } from '../../../routing/router.js';
import { AffinityMap } from '../affinity-map.js';

export const RESEND_MEMORY_MS = 60_000;
export const RESEND_MEMORY_MAX_ENTRIES = 10_000;

export interface RememberedSend {
  /** The origin that accepted it first. */
  readonly home: Candidate;
  /** Every origin that accepted it, as "pool/origin". */
  readonly origins: string[];
  readonly until: number;
}

export class SendMemory {
  readonly #clock: Clock;
  readonly #sends: AffinityMap<RememberedSend>;

  constructor(clock: Clock, maxEntries = RESEND_MEMORY_MAX_ENTRIES) {
    this.#clock = clock;
    this.#sends = new AffinityMap(maxEntries);
  }

  /** The accepted send of this hash on this network, while remembered. */
  get(network: string, hash: string): RememberedSend | undefined {
    if (this.#sends.size === 0) return undefined;
    return this.#sends.live(key(network, hash), this.#clock.monotonic());
  }

  /** `origin` accepted the transaction: the first acceptance starts the 60 s, later ones join it. */
  accepted(network: string, hash: string, origin: Candidate): void {
    const name = originName(origin);
    const held = this.get(network, hash);
    if (held !== undefined) {
      if (!held.origins.includes(name)) held.origins.push(name);
      return;
    }
    const until = this.#clock.monotonic() + RESEND_MEMORY_MS;
    this.#sends.set(key(network, hash), { home: origin, origins: [name], until });
  }
}

/** An origin as the ledger names it: "pool/origin". */
export function originName(candidate: Candidate): string {
  return `${candidate.pool.name}/${candidate.origin.name}`;
}

function key(network: string, hash: string): string {
  return `${network}\u0000${hash}`;
}
