/**
 * How the tracker (tracker.ts) makes one network's chain from its settings: the NetworkChain with its
 * canonical events, finalized blocks and refused claims wired to the tracker's listeners and counts, and
 * whether a reloaded network's settings need a new chain (`sameChainSettings`): a changed poll interval,
 * trust anchor or quorum does (the network's chain starts over, as at a start); changed pools do not (the
 * tracker re-reads them from the directory, keeping each origin's state).
 */
import { isDeepStrictEqual } from 'node:util';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { HealthView } from '../model/health-view.js';
import type { ChainCounts } from './metrics.js';
import type { HeaderHasher } from './network-anchor.js';
import { NetworkChain } from './network-chain.js';
import type { ChainListener, ChainSource } from './types.js';

/** What the tracker reads of a network's config (config/schema.ts NetworkConfig has these keys). */
export interface ChainNetworkSettings {
  readonly pools: readonly string[];
  /** ms */
  readonly head_poll_interval: number;
  /** The operator's own origins (anchor.ts; none when absent) and the trust quorum (trust.ts; default 2). */
  readonly verify_anchor?: { readonly origins: readonly string[]; readonly quorum?: number };
}

export interface NetworkSetup {
  readonly health: HealthView;
  readonly source: ChainSource;
  readonly clock: Clock;
  readonly logger: Logger | undefined;
  readonly counts: ChainCounts | undefined;
  /** Hashes a header's fields (the gateway passes verify/'s): trusted blocks vouch for their parents. */
  readonly hashHeader: HeaderHasher | undefined;
  /** Calls every listener of the tracker (the tracker guards each). */
  emit(call: (listener: ChainListener) => void): void;
}

export function makeNetworkChain(name: string, settings: ChainNetworkSettings, setup: NetworkSetup): NetworkChain {
  const { health, source, clock, logger, counts, hashHeader, emit } = setup;
  return new NetworkChain(name, settings.head_poll_interval, {
    health,
    source,
    clock,
    logger,
    anchor: settings.verify_anchor?.origins ?? [],
    quorum: settings.verify_anchor?.quorum,
    hashHeader,
    refused: (origin) => {
      counts?.refused(name, origin.origin.name);
      emit((l) => l.refused?.(name, origin.pool.id, origin.origin.name));
    },
    events: {
      head: (block) => emit((l) => l.head?.(name, block)),
      reorg: (reorg) => {
        counts?.reorg(name);
        logger?.info('chain reorg', {
          network: name,
          fork_point: reorg.forkPoint,
          removed: reorg.removed.length,
          beyond_window: reorg.beyondWindow,
        });
        emit((l) => l.reorg?.(name, reorg));
      },
      gap: (from, to) => {
        logger?.warn('chain heads skipped: too far behind to back-fill', { network: name, from, to });
        emit((l) => l.gap?.(name, from, to));
      },
    },
    finalized: (block) => emit((l) => l.finalized?.(name, block)),
  });
}

/** Whether a network keeps its chain across a reload from `before` to `after` (see the header). */
export function sameChainSettings(before: ChainNetworkSettings, after: ChainNetworkSettings): boolean {
  return (
    before.head_poll_interval === after.head_poll_interval &&
    isDeepStrictEqual(before.verify_anchor?.origins ?? [], after.verify_anchor?.origins ?? []) &&
    before.verify_anchor?.quorum === after.verify_anchor?.quorum
  );
}
