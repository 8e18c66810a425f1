/**
 * How far ahead of the adopted head a network's next head may plausibly be (SPEC §20): a chain makes one
 * block per block interval, so since the last head was adopted at most
 *
 *   ceiling = adopted head + BOUND_SLACK (8) + BOUND_FACTOR (10) × elapsed ÷ block interval
 *
 * blocks can have appeared. A single origin's head claim above it is refused however well it links (a
 * liar can make up a linked chain of any length), and so is an answer showing a head above it.
 *
 * The block interval is the chain's own: the mean over the last INTERVAL_BLOCKS (32) canonical blocks'
 * timestamps, the span taken as at least 1 s (timestamps are whole seconds, so blocks sharing one second
 * make an interval under a second, and a burst of blocks with one timestamp a short one); with fewer than
 * two blocks known it is DEFAULT_INTERVAL_MS (1 s). Elapsed time is read from whichever clock reading
 * `since` came from: the tracker's monotonic one; a worker's replica uses the wall clock the control
 * process stamped the bound with (cluster/replica-chain.ts), the one reading two processes share.
 */
import type { BlockHead } from './types.js';

export const BOUND_FACTOR = 10;
export const BOUND_SLACK = 8;
export const INTERVAL_BLOCKS = 32;
export const DEFAULT_INTERVAL_MS = 1_000;

/** The last adopted head and when, with the chain's block interval: all a ceiling needs. */
export interface HeadBound {
  readonly tip: number;
  /** When the tip was adopted (ms, on the reading `ceiling` is given). */
  readonly since: number;
  readonly intervalMs: number;
}

export function ceiling(bound: HeadBound, now: number): number {
  const elapsed = Math.max(0, now - bound.since);
  return bound.tip + BOUND_SLACK + Math.floor((BOUND_FACTOR * elapsed) / bound.intervalMs);
}

/** The mean block interval (ms) over the last INTERVAL_BLOCKS of `blocks` (ascending, contiguous). */
export function blockIntervalMs(blocks: readonly BlockHead[]): number {
  const last = blocks[blocks.length - 1];
  const first = blocks[Math.max(0, blocks.length - 1 - INTERVAL_BLOCKS)];
  if (last === undefined || first === undefined || last.number <= first.number) return DEFAULT_INTERVAL_MS;
  const spanSeconds = Math.max(1, last.timestamp - first.timestamp);
  return (spanSeconds * 1000) / (last.number - first.number);
}
