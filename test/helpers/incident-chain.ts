/**
 * A scripted chain for the incident detector's tests (src/incidents/): blocks of named branches, and a
 * ScriptedChain that plays the tracker — its listeners get the heads, reorgs and finalized blocks a test
 * emits, and `setOrigin` sets what it reports of each origin (its last header, usable or not).
 */
import type { TrackedOrigin } from '../../src/chain/tracker.js';
import type { BlockHead, ChainListener } from '../../src/chain/types.js';
import type { ManualClock } from '../../src/clock.js';
import type { IncidentChain } from '../../src/incidents/detector.js';
import { IncidentDetector } from '../../src/incidents/detector.js';
import { silentLogger } from '../../src/log.js';
import type { Origin, Pool } from '../../src/model/pool.js';
import type { Store } from '../../src/store/database.js';

export const T0 = Date.parse('2026-01-01T00:00:00Z');

/** Block n's hash on `branch` (one letter). */
export function hash(n: number, branch = 'a'): string {
  return `0x${branch.repeat(8)}${n.toString(16).padStart(56, '0')}`;
}

/** Block n of `branch`, its parent on the same branch. */
export function block(n: number, branch = 'a', timestampS = 1_700_000_000 + n * 12): BlockHead {
  return { number: n, hash: hash(n, branch), parentHash: hash(n - 1, branch), timestamp: timestampS, header: {} };
}

/** Block n of `branch`, which parted from branch a after block `from − 1`. */
export function forked(n: number, branch: string, from: number): BlockHead {
  return { ...block(n, branch), parentHash: n === from ? hash(n - 1) : hash(n - 1, branch) };
}

export class ScriptedChain implements IncidentChain {
  listeners = new Set<ChainListener>();
  head: number | undefined;
  tip: BlockHead | undefined;
  origins: TrackedOrigin[] = [];
  touched = 0;
  addListener(listener: ChainListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  networks(): string[] {
    return ['net'];
  }
  trackedOrigins(): TrackedOrigin[] {
    return this.origins;
  }
  networkHead(): number | undefined {
    return this.head;
  }
  canonicalHead(): BlockHead | undefined {
    return this.tip;
  }
  touch(): void {
    this.touched += 1;
  }
  emitHead(b: BlockHead): void {
    this.head = Math.max(this.head ?? 0, b.number);
    this.tip = b;
    for (const l of this.listeners) l.head?.('net', b);
  }
  emitFinalized(b: BlockHead): void {
    for (const l of this.listeners) l.finalized?.('net', b);
  }
  setOrigin(name: string, header: BlockHead, usable = true): void {
    const pool = { id: 'pool-1', account_id: 'acct-1', name: 'p' } as Pool;
    const origin = { name } as Origin;
    const entry: TrackedOrigin = {
      pool,
      origin,
      state: { head: header.number, hash: header.hash, earliest: 0, syncing: false, refused: false },
      usable,
      pushing: false,
      header,
    };
    this.origins = [...this.origins.filter((o) => o.origin.name !== name), entry];
  }
}

/** A detector of network `net` on `chain`, whose checks the test drives (no timer of its own). */
export function scriptedDetector(
  store: Store,
  chain: ScriptedChain,
  clock: ManualClock,
  incidents: Record<string, unknown> = {},
  finalityDepth = 2,
  onDemandHeads: readonly string[] = [],
): IncidentDetector {
  return new IncidentDetector({
    onDemandHeads,
    chain,
    networks: {
      net: {
        finality_depth: finalityDepth,
        incidents: { reorg_min_depth: 2, ...incidents } as never,
      },
    },
    store,
    clock,
    logger: silentLogger,
    tickMs: 3_600_000,
  });
}

/** The incidents recorded, oldest first. */
export async function incidentRows(store: Store) {
  return store.db.selectFrom('chain_incidents').selectAll().orderBy('opened_at').execute();
}
