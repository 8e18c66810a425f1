/**
 * The orders a pool's steering policy puts origins in (router.ts applies them):
 *   random — `weightedShuffle`: each next origin drawn with probability proportional to its weight;
 *   hash — `affinityOrder`: each client's own fixed order (weighted rendezvous hashing);
 *   least_outstanding_requests / least_connections — fewest requests in flight per unit of weight first
 *     (router.ts, reading routing/outstanding.ts);
 *   dynamic_latency — by score (pool-index.ts `byScore`), with an exploration share.
 */
import type { Origin } from '../model/pool.js';

/**
 * A client's own order of origins (weighted rendezvous hashing): each origin scores
 * weight / −ln(u), u ∈ (0, 1) drawn from a hash of client and origin name; highest first. The order
 * depends only on the client and each origin's own name and weight.
 */
export function affinityOrder(origins: readonly Origin[], client: string): Origin[] {
  const scored = origins.map((origin) => {
    const u = (fnv1a(`${client}\u0000${origin.name}`) + 0.5) / 4_294_967_296;
    return { origin, score: origin.weight / -Math.log(u) };
  });
  scored.sort((a, b) => b.score - a.score || (a.origin.name < b.origin.name ? -1 : 1));
  return scored.map((entry) => entry.origin);
}

/** FNV-1a over the UTF-16 code units of `text`, then a final avalanche: 32 well-mixed bits. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  return hash >>> 0;
}

/** A random order where each next origin is drawn with probability proportional to its weight. */
export function weightedShuffle(origins: readonly Origin[], random: () => number): Origin[] {
  const left = [...origins];
  const out: Origin[] = [];
  while (left.length > 0) {
    const pick = drawOne(left, random);
    out.push(pick);
    left.splice(left.indexOf(pick), 1);
  }
  return out;
}

/**
 * `order` (best first) with, when `explore`, one of the others drawn by weight moved to the front: the
 * exploration share of dynamic_latency steering, so a recovered origin gets measured again.
 */
export function explored(order: readonly Origin[], explore: boolean, random: () => number): readonly Origin[] {
  if (!explore || order.length < 2) return order;
  const [best, ...others] = order;
  const pick = drawOne(others, random);
  return [pick, best as Origin, ...others.filter((origin) => origin !== pick)];
}

/** One origin of a non-empty list, drawn with probability proportional to its weight. */
export function drawOne(origins: readonly Origin[], random: () => number): Origin {
  let total = 0;
  for (const origin of origins) total += origin.weight;
  let r = random() * total;
  for (const origin of origins) {
    r -= origin.weight;
    if (r < 0) return origin;
  }
  return origins[origins.length - 1] as Origin;
}
