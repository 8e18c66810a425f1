/**
 * The operator's own origins: `networks.{name}.verify_anchor.origins` (SPEC §18's trust anchor, which the
 * adoption rule of §20 shares). Each entry names one origin of the network as `pool/origin` (the pool name
 * is everything before the first `/`; pool names cannot hold one), or by its bare name when exactly one
 * tracked origin of the network is called that. A head a trusted origin reports is adopted on its word
 * (network-chain.ts); an entry that names no tracked origin, or a bare name two pools share, trusts none
 * and is reported by `unmatched` (the tracker logs it once per change).
 */
import type { OriginChain } from './origin-chain.js';

export interface Anchor {
  readonly trusted: ReadonlySet<OriginChain>;
  /** Entries that matched no tracked origin, or (bare names) more than one. */
  readonly unmatched: readonly string[];
}

export function resolveAnchor(entries: readonly string[], origins: readonly OriginChain[]): Anchor {
  const trusted = new Set<OriginChain>();
  const unmatched: string[] = [];
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    const matches =
      slash < 0
        ? origins.filter((record) => record.origin.name === entry)
        : origins.filter(
            (record) => record.pool.name === entry.slice(0, slash) && record.origin.name === entry.slice(slash + 1),
          );
    if (matches.length === 1) trusted.add(matches[0] as OriginChain);
    else unmatched.push(entry);
  }
  return { trusted, unmatched };
}
