/**
 * Who may move a network's canonical chain (SPEC §20: no single origin moves the chain). One origin's
 * head claim (its last polled or pushed header) is adopted when
 * - it links by parent hash to the canonical chain (the blocks between are fetched from that origin and
 *   each link checked: canonical.ts) and lies within the head ceiling (head-bound.ts), or
 * - it is vouched for: another origin reports the same block (below), or the origin is one the operator
 *   trusts (`verify_anchor.origins`, anchor.ts). A vouched claim may also lie beyond the ceiling.
 * Replacing blocks (a reorg, a restart after a gap or of a reset chain) needs the leader (network-chain.ts:
 * no flapping between two branches) and a claim another origin backs, or a trusted origin (leader or
 * not: the operator's word wins); starting an empty chain needs a vouched claim.
 * Everything else is refused: nothing moves, and the network marks the origin refused. Only while the
 * chain is empty, a claim no other origin could judge yet (every backer's header is below it, or none
 * has shown one) is `pending` instead, neither adopted nor refused, and judged again once another origin
 * shows a header: at start-up the first origin to answer waits for the others instead of starting the
 * chain alone. Later, such a claim is refused (an origin that always claims one block more than the
 * others have would otherwise never be).
 *
 * Who reports the same block, "backers": the other offering origins (usable, with a header, reads not
 * failing) of other pools, and trusted ones of any pool; where no offering origin is in another pool
 * (a network of one pool, or the other pools' origins all down), the origin's pool-mates. A backer
 * reports block n as the claim does when its own header is that block, when its header is on our
 * canonical chain at or above n (its block n is ours), or — asked by number, at most BACKING_ASKS (2) of
 * the others at or above n — when it answers n with the same hash. A backer below n cannot back yet.
 * A trusted origin's claim is vouched for without asking anyone.
 *
 * Exceptions, followed as before this rule: a lone origin (the only tracked origin of the network) is
 * adopted whatever it says, without ceiling. An origin alone for now — every other tracked origin
 * unusable or failing its head reads — needs no backer, but its claims stay within the ceiling.
 */
import type { CanonicalChain, FollowOutcome } from './canonical.js';
import type { OriginChain } from './origin-chain.js';
import type { BlockHead, ChainSource } from './types.js';

export const BACKING_ASKS = 2;

/** A judgement: what the canonical chain did with the claim, or `pending` (see the header). */
export type Judgement = FollowOutcome | 'pending';

/** Whether other origins report a claimed block: `unknown` when none of them could tell yet. */
type Backing = 'yes' | 'no' | 'unknown';

/** What a judgement reads of the network at the time (network-chain.ts builds it for each step). */
export interface AdoptionContext {
  readonly canonical: CanonicalChain;
  /** Every tracked origin of the network. */
  readonly tracked: readonly OriginChain[];
  /** The origins whose headers are offered this step: usable, with a header, reads not failing. */
  readonly offers: readonly OriginChain[];
  readonly leader: OriginChain | undefined;
  readonly trusted: ReadonlySet<OriginChain>;
  /** The head ceiling now (undefined: none yet, or a lone origin). */
  readonly ceiling: number | undefined;
  readonly source: ChainSource;
  usable(origin: OriginChain): boolean;
  /** A backer answered a block when asked (the trust anchor counts it as that origin's report). */
  reported?(origin: OriginChain, block: BlockHead): void;
}

/** Offers `origin`'s header to the canonical chain under the rule above. */
export async function judgeClaim(origin: OriginChain, header: BlockHead, ctx: AdoptionContext): Promise<Judgement> {
  const fetch = (n: number) => ctx.source.block(origin.pool, origin.origin, n);
  if (ctx.tracked.length === 1) return ctx.canonical.follow(header, fetch, true);
  let asked: Promise<Backing> | undefined;
  const vouched = async (): Promise<Backing> => {
    if (ctx.trusted.has(origin)) return 'yes';
    asked ??= backed(origin, header, ctx);
    return asked;
  };
  const alone = isAlone(origin, ctx);
  if (ctx.canonical.tip === undefined) {
    if (alone) return ctx.canonical.follow(header, fetch, true);
    const backing = await vouched();
    return backing === 'yes'
      ? ctx.canonical.follow(header, fetch, true)
      : backing === 'unknown'
        ? 'pending'
        : 'refused';
  }
  if (ctx.ceiling !== undefined && header.number > ctx.ceiling && (await vouched()) !== 'yes') return 'refused';
  return ctx.canonical.follow(header, fetch, async () => {
    if (alone || ctx.trusted.has(origin)) return true;
    return origin === ctx.leader && (await vouched()) === 'yes';
  });
}

function isAlone(origin: OriginChain, ctx: AdoptionContext): boolean {
  return ctx.tracked.every((other) => other === origin || !ctx.usable(other) || other.readsFailing);
}

/** Whether another origin reports `header`'s block (see the header). */
async function backed(origin: OriginChain, header: BlockHead, ctx: AdoptionContext): Promise<Backing> {
  const ours = ctx.canonical.at(header.number);
  const askable: OriginChain[] = [];
  let judged = false;
  for (const backer of backers(origin, ctx)) {
    const theirs = backer.header as BlockHead;
    if (theirs.number < header.number) continue;
    judged = true;
    if (theirs.number === header.number && theirs.hash === header.hash) return 'yes';
    if (ours !== undefined && ctx.canonical.at(theirs.number)?.hash === theirs.hash) {
      if (ours.hash === header.hash) return 'yes'; // on our chain at or above it: its block there is ours
    } else {
      askable.push(backer); // on another branch, or a head that differs from what it serves by number
    }
  }
  for (const backer of askable.slice(0, BACKING_ASKS)) {
    try {
      const block = await ctx.source.block(backer.pool, backer.origin, header.number);
      if (block !== undefined) ctx.reported?.(backer, block);
      if (block?.hash === header.hash) return 'yes';
    } catch {
      // Could not be asked: it backs nothing this time.
    }
  }
  return judged ? 'no' : 'unknown';
}

function backers(origin: OriginChain, ctx: AdoptionContext): OriginChain[] {
  const others = ctx.offers.filter((other) => other !== origin);
  const elsewhere = others.filter((other) => other.pool.id !== origin.pool.id || ctx.trusted.has(other));
  return others.some((other) => other.pool.id !== origin.pool.id) ? elsewhere : others;
}
