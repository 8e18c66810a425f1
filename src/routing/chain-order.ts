/**
 * Chain-aware order of a plan (SPEC §9), applied to the router's plan (router.ts) for one call, with what
 * the call needs (chain/types.ts `CallNeeds`) and what the chain tracker knows (`ChainView`):
 *   head  — origins within `max_head_lag` of the network head first; then origins whose head is not
 *           known yet; then lagging origins, most advanced first (tried only when the others fail) —
 *           an origin whose head claim the tracker refused (SPEC §20) counts as lagging;
 *   block — origins whose head ≥ `to` and earliest ≤ `from` first; then origins with an unknown head that
 *           are not known to lack `from`; then those behind `to`, most advanced first (a block no origin
 *           has yet goes to the most advanced one, whose answer passes through); origins known to lack
 *           `from` (pruned) last;
 *   hash, none — unchanged.
 * Inside each group the router's order (steering, failover across pools) is kept. Nothing is dropped: a
 * plan only changes order. `eligible` says how many leading candidates meet the need, so the forwarder
 * reorders by free connections only among those.
 * While the tracker knows no head for the network the plan is unchanged. The usual case — every
 * candidate meets the need — allocates nothing.
 */
import type { CallNeeds, ChainView, OriginChainState } from '../chain/types.js';
import type { Candidate } from './router.js';

export interface ChainOrdered {
  readonly plan: Candidate[];
  /** How many leading candidates of `plan` meet the need (all of them when the need is hash/none). */
  readonly eligible: number;
}

/** Group ranks: 0 meets the need, 1 unknown head, 2 behind (sorted by head, highest first), 3 lacks the data. */
type Rank = 0 | 1 | 2 | 3;

export function orderByChain(
  plan: Candidate[],
  needs: CallNeeds,
  chain: ChainView,
  network: string,
  maxHeadLag: number,
): ChainOrdered {
  if (needs.kind === 'hash' || needs.kind === 'none') return { plan, eligible: plan.length };
  const networkHead = chain.networkHead(network);
  if (networkHead === undefined && needs.kind === 'head') return { plan, eligible: plan.length };
  let all = true;
  for (const candidate of plan) {
    if (rank(needs, networkHead, maxHeadLag, chain.origin(candidate.pool.id, candidate.origin.name)) !== 0) {
      all = false;
      break;
    }
  }
  if (all) return { plan, eligible: plan.length };
  const ranked = plan.map((candidate, index) => {
    const state = chain.origin(candidate.pool.id, candidate.origin.name);
    return {
      candidate,
      index,
      rank: rank(needs, networkHead, maxHeadLag, state),
      head: state?.head ?? -1,
      earliest: state?.earliest ?? 0,
    };
  });
  ranked.sort(
    (a, b) =>
      a.rank - b.rank ||
      (a.rank === 2 ? b.head - a.head : a.rank === 3 ? a.earliest - b.earliest : 0) ||
      a.index - b.index,
  );
  return {
    plan: ranked.map((entry) => entry.candidate),
    eligible: ranked.filter((entry) => entry.rank === 0).length,
  };
}

/**
 * Whether `candidate` meets the call's need (rank 0 above), so that it may come first: what the
 * router's fast path (router.ts `first`) asks of the candidate it draws. True whenever orderByChain
 * would leave the plan unchanged.
 */
export function meetsNeed(
  candidate: Candidate,
  needs: CallNeeds,
  chain: ChainView,
  network: string,
  maxHeadLag: number,
): boolean {
  if (needs.kind === 'hash' || needs.kind === 'none') return true;
  const networkHead = chain.networkHead(network);
  if (networkHead === undefined && needs.kind === 'head') return true;
  return rank(needs, networkHead, maxHeadLag, chain.origin(candidate.pool.id, candidate.origin.name)) === 0;
}

/** Where an origin stands for a head-relative or pinned call (a plain function: no closure per call). */
function rank(
  needs: Extract<CallNeeds, { kind: 'head' | 'block' }>,
  networkHead: number | undefined,
  maxHeadLag: number,
  state: OriginChainState | undefined,
): Rank {
  if (needs.kind === 'head') {
    if (state?.refused === true) return 2;
    if (state?.head === undefined) return 1;
    return state.head >= (networkHead as number) - maxHeadLag ? 0 : 2;
  }
  if (state !== undefined && state.earliest > needs.from) return 3;
  if (state?.head === undefined) return 1;
  return state.head >= needs.to ? 0 : 2;
}

/** The candidate with the highest known head other than `except`, if any is ahead of `than`. */
export function mostAdvanced(
  plan: readonly Candidate[],
  chain: ChainView,
  except: Candidate,
  than: number | undefined,
): Candidate | undefined {
  let best: Candidate | undefined;
  let bestHead = than ?? -1;
  for (const candidate of plan) {
    if (candidate === except) continue;
    if (candidate.pool.id === except.pool.id && candidate.origin.name === except.origin.name) continue;
    const head = chain.origin(candidate.pool.id, candidate.origin.name)?.head;
    if (head !== undefined && head > bestHead) {
      best = candidate;
      bestHead = head;
    }
  }
  return best;
}
