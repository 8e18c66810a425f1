/**
 * Start-up steps of the transaction ledger (SPEC §19, docs/ledger.md). The ledger is made before the
 * gateway, which tells it of every accepted transaction through `ledger.sends` (queued until it starts;
 * with workers, the control process relays theirs to it), and started last, once the chain tracker it
 * follows exists. Its state changes wake the notification service (whichever `live` holds then). Stopped
 * before the alerting side, so its last writes reach the store; then its origin clients close.
 */
import type { ChainTracker } from '../chain/tracker.js';
import { buildOriginCalls } from '../gateway/upstream/origin-calls.js';
import { BufferPool } from '../http1/index.js';
import { Ledger } from '../ledger/ledger.js';
import type { PoolDirectory } from '../model/pool.js';
import type { Store } from '../store/database.js';
import type { LiveParts } from './live.js';
import type { StartUp } from './start-up.js';

/** The ledger, recording nothing yet: its `sends` go to the gateway. */
export function createLedger(s: StartUp, store: Store, live: LiveParts): Ledger {
  return new Ledger({
    config: s.config,
    store,
    clock: s.clock,
    logger: s.part('ledger'),
    metrics: s.metrics,
    onEvents: () => live.wakeNotifications(),
  });
}

/**
 * The ledger follows each recorded transaction on the tracker's adopted chain, asking origins over clients
 * of its own (outside client traffic, under the routing account's outbound rules).
 */
export async function startLedger(
  s: StartUp,
  ledger: Ledger,
  directory: PoolDirectory,
  live: LiveParts,
  chain: ChainTracker,
): Promise<void> {
  const originCalls = buildOriginCalls({
    config: s.config,
    directory,
    outbound: live.outbound,
    buffers: new BufferPool(),
  });
  s.onStop(() => originCalls.close());
  await ledger.start({ chain, calls: originCalls.calls });
  s.onStop(() => ledger.stop());
}
