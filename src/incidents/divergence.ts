/**
 * Origin divergence (SPEC §14): two healthy origins of a network report different hashes for the same
 * block number at or below `head − finality_depth`. Pure: fed samples of each origin's last header.
 *
 * What each origin had: per origin, the hashes of the recent heights it showed as its head (up to
 * HISTORY (512) heights), kept honest with the header's parent: a header whose parent hash disagrees with
 * what was recorded one below drops everything below it (that branch was left), and a header at or below
 * the last recorded height drops what was above it (the origin went back). A skipped height is simply
 * not known.
 *
 * Judging (each `judge`): among the usable (healthy) origins, the newest height at or below the limit
 * that all of them recorded — or, when they share none, that at least two did. Different hashes there
 * → diverged; the same → agreed; no such height → unknown (the state stays). Fewer than two usable
 * origins → agreed (nothing to diverge from: the odd one was fixed, disabled or became unhealthy).
 *
 * Hysteresis: START only after CONFIRM_HEIGHTS (2) judgements found different hashes at two different
 * heights in a row (a hash recorded just before a shallow reorg the sampler missed cannot page anyone);
 * END at the first agreement.
 *
 * Seen late (`endedAfter`): a finding is the same divergence another process already saw end when that
 * process found its origins agreeing at a height at or above the finding's, and did so after every hash
 * of the finding was recorded here. Origins that share a block share all below it, so such a difference
 * is this process's older view of it, not a new divergence.
 */
import type { BlockHead } from '../chain/types.js';

export const HISTORY = 512;
export const CONFIRM_HEIGHTS = 2;

export interface OriginSample {
  /** Unique key of the origin (pool id + name). */
  readonly key: string;
  readonly name: string;
  readonly poolId: string;
  readonly usable: boolean;
  readonly header: BlockHead | undefined;
}

export interface DivergenceFinding {
  readonly number: number;
  /** When the newest of the compared hashes was first recorded here (ms): the difference is known since. */
  readonly seenAt: number;
  /** origin name → hash, for every compared origin. */
  readonly hashes: Record<string, string>;
  /** Keys of the compared origins. */
  readonly keys: string[];
}

export type DivergenceChange =
  | { readonly kind: 'start'; readonly finding: DivergenceFinding }
  | { readonly kind: 'end'; readonly finding: DivergenceFinding | undefined };

export class Divergence {
  /** origin key → height → the hash recorded there, and when it was first recorded (ms). */
  readonly #seen = new Map<string, Map<number, Recorded>>();
  #diverged = false;
  /** Heights at which a mismatch was found in a row (before START). */
  #mismatchHeights: number[] = [];

  get diverged(): boolean {
    return this.#diverged;
  }

  adopt(): void {
    this.#diverged = true;
  }

  /** Records an origin's current header, seen at `at` (ms). */
  sample(key: string, header: BlockHead, at: number): void {
    let heights = this.#seen.get(key);
    if (heights === undefined) {
      heights = new Map();
      this.#seen.set(key, heights);
    }
    if (heights.get(header.number)?.hash === header.hash) return;
    for (const height of heights.keys()) if (height >= header.number) heights.delete(height);
    const below = heights.get(header.number - 1);
    if (below !== undefined && below.hash !== header.parentHash) heights.clear();
    if (heights.get(header.number - 1) === undefined) heights.set(header.number - 1, { hash: header.parentHash, at });
    heights.set(header.number, { hash: header.hash, at });
    while (heights.size > HISTORY) {
      let lowest = Number.POSITIVE_INFINITY;
      for (const height of heights.keys()) if (height < lowest) lowest = height;
      heights.delete(lowest);
    }
  }

  /** Forgets origins no longer tracked. */
  retain(keys: ReadonlySet<string>): void {
    for (const key of this.#seen.keys()) if (!keys.has(key)) this.#seen.delete(key);
  }

  /** Judges the usable origins against `limit` (head − finality_depth). */
  judge(origins: readonly OriginSample[], limit: number): DivergenceChange | undefined {
    const usable = origins.filter((origin) => origin.usable && this.#seen.has(origin.key));
    if (usable.length < 2) return this.#agreed(undefined);
    const finding = this.#compare(usable, limit);
    if (finding === undefined) return undefined;
    const differ = new Set(Object.values(finding.hashes)).size > 1;
    if (!differ) return this.#agreed(finding);
    if (this.#diverged) return undefined;
    if (!this.#mismatchHeights.includes(finding.number)) this.#mismatchHeights.push(finding.number);
    if (this.#mismatchHeights.length < CONFIRM_HEIGHTS) return undefined;
    this.#diverged = true;
    this.#mismatchHeights = [];
    return { kind: 'start', finding };
  }

  #agreed(finding: DivergenceFinding | undefined): DivergenceChange | undefined {
    this.#mismatchHeights = [];
    if (!this.#diverged) return undefined;
    this.#diverged = false;
    return { kind: 'end', finding };
  }

  #compare(usable: readonly OriginSample[], limit: number): DivergenceFinding | undefined {
    const counts = new Map<number, number>();
    for (const origin of usable) {
      for (const height of this.#seen.get(origin.key)?.keys() ?? []) {
        if (height <= limit) counts.set(height, (counts.get(height) ?? 0) + 1);
      }
    }
    let all: number | undefined;
    let some: number | undefined;
    for (const [height, count] of counts) {
      if (count === usable.length && (all === undefined || height > all)) all = height;
      if (count >= 2 && (some === undefined || height > some)) some = height;
    }
    const number = all ?? some;
    if (number === undefined) return undefined;
    const hashes: Record<string, string> = {};
    const keys: string[] = [];
    let seenAt = 0;
    for (const origin of usable) {
      const recorded = this.#seen.get(origin.key)?.get(number);
      if (recorded === undefined) continue;
      hashes[origin.name] = recorded.hash;
      keys.push(origin.key);
      seenAt = Math.max(seenAt, recorded.at);
    }
    return { number, seenAt, hashes, keys };
  }
}

interface Recorded {
  readonly hash: string;
  readonly at: number;
}

/** What another process recorded when it saw a divergence end (its END's data and time). */
export interface DivergenceEnd {
  /** The height its origins agreed at (absent: it ended because fewer than two origins were usable). */
  readonly number: number | undefined;
  /** The origins that agreed there (names). */
  readonly origins: readonly string[];
  /** When it saw them agree (ms). */
  readonly at: number;
}

/**
 * Whether `finding` is a divergence that `end` already saw clear (see "Seen late" above): the same
 * origins agreed at a height at or above the finding's, seen after every hash of the finding was
 * recorded. An END for want of usable origins shows no agreement, so it never covers a finding.
 */
export function endedAfter(finding: DivergenceFinding, end: DivergenceEnd): boolean {
  if (end.number === undefined || finding.number > end.number || end.at < finding.seenAt) return false;
  return Object.keys(finding.hashes).every((name) => end.origins.includes(name));
}
