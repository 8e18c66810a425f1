/**
 * The chain-incident detector (SPEC §14): listens to the chain tracker (heads, reorgs, gaps, finalized
 * blocks) and reads its per-origin state — it asks no origin anything itself — and records incidents in
 * the store for the notification dispatcher. It runs in the process that runs the tracker and the
 * notification service (main.ts wires it to `gateway.chain`: the control process's tracker with workers).
 *
 * Per configured network with pools:
 * - head stall (stall.ts): the canonical head has not advanced for `incidents.head_stall_after`
 *   (default 10 × the median interval of the last 32 blocks' timestamps, at least 10 s; none before 8
 *   blocks were seen). A gap counts as an advance. The clock starts at `start()` from the canonical
 *   head the tracker already holds (a chain that never moves after that still stalls).
 * - finality stall (stall.ts): the finalized block has not advanced for `incidents.finality_stall_after`
 *   (default 3 × the median interval of the last 16 advances, at least the head-stall threshold; none
 *   before 4 advances). The tracker fetches the finalized block only for networks in use, so the
 *   detector marks every network in use on each check (`touch`): one `finalized` lookup per 12 s.
 * - origin divergence (divergence.ts), judged on each head and each check against
 *   `head − finality_depth`.
 * - reorg: a tracker reorg that replaced at least `incidents.reorg_min_depth` (default 2) blocks; a
 *   one-off whose id derives from (network, fork point, first replaced hash).
 * A network whose head advances only on demand (`onDemandHeads`: the offline devnet mining a block per
 * transaction, `devnet.block_time` 0: devnet/idle-heads.ts) is never judged stalled, head or finality:
 * an idle chain there is the normal state, not an incident. Divergence and reorgs are still watched.
 * A stall's id derives from what stalled (head: network, block number and hash; finality: network and
 *   finalized number), so a process that sees the stall late — after another process recorded it and
 *   already its END — finds that row (the insert conflicts on the id) instead of opening it again.
 *   A divergence seen late is recognised by the END another process recorded (divergence.ts
 *   `endedAfter`): nothing is opened, and this process's own END of it is dropped.
 *
 * Checks run every TICK_MS (250 ms, an unref'd timer; only clock reads and map walks). Store writes go
 * through one queue, in order; a write that fails stays first in the queue and is retried on the next
 * check, so a store outage delays alerts but loses none. Several processes on one store: incidents/
 * queries.ts makes each START, END and reorg a compare-and-set, and `start()` adopts incidents left open
 * (by an earlier run or another process) so their END is still sent — an adopted head stall ends after
 * two advances past the block it stalled at, not on heads at or below it.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { ChainTracker } from '../chain/tracker.js';
import type { BlockHead, ChainReorg } from '../chain/types.js';
import type { Clock } from '../clock.js';
import type { NetworkConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/database.js';
import { Divergence, type DivergenceEnd, type DivergenceFinding, endedAfter, type OriginSample } from './divergence.js';
import { closeIncident, openIncident, openIncidents, recordOneOff } from './queries.js';
import { incidentScope } from './scope.js';
import { Stall } from './stall.js';
import type { IncidentData, IncidentKind, IncidentRecord } from './types.js';
import { WriteQueue } from './write-queue.js';

export const TICK_MS = 250;
const HEAD_STALL_FLOOR_MS = 10_000;

/** What the detector reads of the tracker. */
export type IncidentChain = Pick<
  ChainTracker,
  'addListener' | 'networks' | 'trackedOrigins' | 'networkHead' | 'canonicalHead' | 'touch'
>;

export interface IncidentDetectorOptions {
  readonly chain: IncidentChain;
  readonly networks: Readonly<Record<string, Pick<NetworkConfig, 'finality_depth' | 'incidents'>>>;
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Called after an incident was written (main.ts wakes the notification service). */
  readonly onRecorded?: () => void;
  /** Networks whose head moves only when asked to (see the header): no stall alerts there. */
  readonly onDemandHeads?: readonly string[];
  readonly tickMs?: number;
}

interface NetworkIncidents {
  readonly name: string;
  readonly finalityDepth: number;
  readonly reorgMinDepth: number;
  readonly head: Stall;
  readonly finality: Stall;
  /** Whether head and finality stalls are judged (not for a chain that advances only on demand). */
  readonly stalls: boolean;
  readonly divergence: Divergence;
  /**
   * Kinds whose START this process judged but found already ended by another process (queries.ts
   * `covered`): their next END here is no news, and must not close an incident opened since.
   */
  readonly coveredStarts: Set<IncidentKind>;
}

export class IncidentDetector {
  readonly #options: IncidentDetectorOptions;
  readonly #networks = new Map<string, NetworkIncidents>();
  readonly #writes: WriteQueue;
  #timer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #stopped = false;

  constructor(options: IncidentDetectorOptions) {
    this.#options = options;
    this.#writes = new WriteQueue(options.logger, options.onRecorded);
    for (const name of options.chain.networks()) {
      const config = options.networks[name];
      if (config === undefined) continue;
      const head = new Stall({
        configured: config.incidents.head_stall_after,
        factor: 10,
        window: 32,
        minSamples: 8,
        floorMs: () => HEAD_STALL_FLOOR_MS,
      });
      const finality = new Stall({
        configured: config.incidents.finality_stall_after,
        factor: 3,
        window: 16,
        minSamples: 4,
        floorMs: () => config.incidents.head_stall_after ?? head.threshold() ?? HEAD_STALL_FLOOR_MS,
      });
      this.#networks.set(name, {
        name,
        finalityDepth: config.finality_depth,
        reorgMinDepth: config.incidents.reorg_min_depth,
        head,
        finality,
        stalls: !(options.onDemandHeads ?? []).includes(name),
        divergence: new Divergence(),
        coveredStarts: new Set(),
      });
    }
  }

  /** Adopts incidents left open, then follows the tracker and checks every TICK_MS. */
  async start(): Promise<void> {
    const now = this.#options.clock.now();
    for (const incident of await openIncidents(this.#options.store.db)) {
      const state = this.#networks.get(incident.network);
      if (state === undefined) continue;
      if (incident.kind === 'head_stall') state.head.adopt(now, incident.data.block_number);
      else if (incident.kind === 'finality_stall') state.finality.adopt(now);
      else if (incident.kind === 'origin_divergence') state.divergence.adopt();
    }
    if (this.#stopped) return;
    this.#unsubscribe = this.#options.chain.addListener({
      head: (network, block) => this.#head(network, block),
      gap: (network, _from, to) => this.#advanceHead(network, to, undefined),
      reorg: (network, reorg) => this.#reorg(network, reorg),
      finalized: (network, block) => this.#finalized(network, block),
    });
    // The head the tracker already holds starts the clock (in the same tick as the subscription, so no
    // head falls between): the tracker polls from before the detector starts, and a chain that does
    // not move after that would otherwise never emit a head here, so never be seen to stall.
    for (const state of this.#networks.values()) {
      const tip = this.#options.chain.canonicalHead(state.name);
      if (tip !== undefined) this.#advanceHead(state.name, tip.number, tip.timestamp * 1000);
    }
    this.#timer = setInterval(() => this.check(), this.#options.tickMs ?? TICK_MS);
    this.#timer.unref();
    this.check();
  }

  /** Stops listening; waits for the writes under way (what is still queued is dropped). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await this.#writes.stop();
  }

  /** One check of every network (the timer's work; tests call it after moving a manual clock). */
  check(): void {
    const now = this.#options.clock.now();
    for (const state of this.#networks.values()) {
      this.#options.chain.touch(state.name);
      this.#judgeDivergence(state);
      const head = state.stalls ? state.head.check(now) : undefined;
      if (head !== undefined) {
        // The stalled block's hash (when the canonical tip is that block) makes the id the same in every
        // process that sees this stall, and distinct from a stall at that height on another branch.
        const tip = this.#options.chain.canonicalHead(state.name);
        const hash = tip?.number === head.number ? tip.hash : '';
        this.#open(state, 'head_stall', this.#stallData(state, 'head_stall', head.number, head.since), [], {
          id: derivedId(`${state.name}|head_stall|${head.number}|${hash}`),
        });
      }
      const finality = state.stalls ? state.finality.check(now) : undefined;
      if (finality !== undefined) {
        // A finalized block is final: its number names the stall in every process.
        this.#open(
          state,
          'finality_stall',
          this.#stallData(state, 'finality_stall', finality.number, finality.since),
          [],
          {
            id: derivedId(`${state.name}|finality_stall|${finality.number}`),
          },
        );
      }
    }
    this.#drain();
  }

  /** Resolves when every queued write is done (tests). */
  settled(): Promise<void> {
    return this.#writes.settled();
  }

  #head(network: string, block: BlockHead): void {
    this.#advanceHead(network, block.number, block.timestamp * 1000);
    const state = this.#networks.get(network);
    if (state !== undefined) this.#judgeDivergence(state);
    this.#drain();
  }

  #advanceHead(network: string, number: number, sampleMs: number | undefined): void {
    const state = this.#networks.get(network);
    if (state === undefined) return;
    const now = this.#options.clock.now();
    const change = state.head.advance(number, now, sampleMs ?? now);
    if (change?.kind === 'end')
      this.#close(state, 'head_stall', this.#stallData(state, 'head_stall', number, change.since));
  }

  #finalized(network: string, block: BlockHead): void {
    const state = this.#networks.get(network);
    if (state === undefined) return;
    const now = this.#options.clock.now();
    const change = state.finality.advance(block.number, now, now);
    if (change?.kind === 'end') {
      this.#close(state, 'finality_stall', this.#stallData(state, 'finality_stall', block.number, change.since));
      this.#drain();
    }
  }

  #reorg(network: string, reorg: ChainReorg): void {
    const state = this.#networks.get(network);
    const first = reorg.removed[0];
    if (state === undefined || first === undefined || reorg.removed.length < state.reorgMinDepth) return;
    const at = new Date(this.#options.clock.now()).toISOString();
    const data: IncidentData = {
      network,
      kind: 'reorg',
      block_number: reorg.forkPoint,
      depth: reorg.removed.length,
      since: at,
    };
    const id = derivedId(`${network}|${reorg.forkPoint}|${first.hash}`);
    const scope = incidentScope(this.#options.chain, network, []);
    this.#enqueue(() => recordOneOff(this.#options.store.db, { id, network, kind: 'reorg', data, scope, at }));
    this.#options.logger.warn('chain incident: reorg', { network, fork_point: reorg.forkPoint, depth: data.depth });
    this.#drain();
  }

  #judgeDivergence(state: NetworkIncidents): void {
    const { chain } = this.#options;
    const now = this.#options.clock.now();
    const tracked = chain.trackedOrigins(state.name);
    const samples: OriginSample[] = [];
    const keys = new Set<string>();
    for (const entry of tracked) {
      const key = `${entry.pool.id}/${entry.origin.name}`;
      keys.add(key);
      if (entry.header !== undefined) state.divergence.sample(key, entry.header, now);
      samples.push({ key, name: entry.origin.name, poolId: entry.pool.id, usable: entry.usable, header: entry.header });
    }
    state.divergence.retain(keys);
    const head = chain.networkHead(state.name);
    if (head === undefined) return;
    const change = state.divergence.judge(samples, head - state.finalityDepth);
    if (change === undefined) return;
    if (change.kind === 'start') {
      const { finding } = change;
      this.#open(state, 'origin_divergence', this.#divergenceData(state, finding), finding.keys, {
        covered: (closed) => closed.closed_at !== undefined && endedAfter(finding, divergenceEnd(closed)),
      });
    } else {
      const data: IncidentData =
        change.finding === undefined
          ? { network: state.name, kind: 'origin_divergence' }
          : this.#divergenceData(state, change.finding);
      this.#close(state, 'origin_divergence', data);
    }
  }

  #divergenceData(state: NetworkIncidents, finding: DivergenceFinding): IncidentData {
    return {
      network: state.name,
      kind: 'origin_divergence',
      origins: Object.keys(finding.hashes).sort(),
      block_number: finding.number,
      hashes: finding.hashes,
      since: new Date(this.#options.clock.now()).toISOString(),
    };
  }

  #stallData(state: NetworkIncidents, kind: IncidentKind, number: number, since: number): IncidentData {
    return { network: state.name, kind, block_number: number, since: new Date(since).toISOString() };
  }

  /**
   * `id`: derived from the incident where processes must agree on it (stalls); else a fresh UUID.
   * `covered`: whether the newest closed incident of this kind is this one, seen late (queries.ts).
   */
  #open(
    state: NetworkIncidents,
    kind: IncidentKind,
    data: IncidentData,
    originKeys: readonly string[] = [],
    { id = randomUUID(), covered }: { id?: string; covered?: (closed: IncidentRecord) => boolean } = {},
  ): void {
    const at = new Date(this.#options.clock.now()).toISOString();
    const scope = incidentScope(this.#options.chain, state.name, originKeys);
    const { logger, store } = this.#options;
    logger.warn(`chain incident started: ${kind}`, { network: state.name, block_number: data.block_number });
    this.#enqueue(async () => {
      const { record, created } = await openIncident(
        store.db,
        { id, network: state.name, kind, data, scope, at },
        covered,
      );
      if (!created && record.status === 'closed' && record.id !== id) {
        state.coveredStarts.add(kind);
        logger.info(`chain incident seen late: ${kind} already ended`, { network: state.name, incident: record.id });
      }
      return created;
    });
  }

  #close(state: NetworkIncidents, kind: IncidentKind, data: IncidentData): void {
    const at = new Date(this.#options.clock.now()).toISOString();
    this.#options.logger.info(`chain incident ended: ${kind}`, {
      network: state.name,
      block_number: data.block_number,
    });
    // Queued after this process's START, so a START found covered is known here.
    this.#enqueue(async () =>
      state.coveredStarts.delete(kind) ? false : closeIncident(this.#options.store.db, state.name, kind, data, at),
    );
  }

  #enqueue(write: () => Promise<boolean>): void {
    if (!this.#stopped) this.#writes.enqueue(write);
  }

  #drain(): void {
    this.#writes.drain();
  }
}

/** A closed divergence's END as divergence.ts judges it. */
function divergenceEnd(closed: IncidentRecord): DivergenceEnd {
  const end = closed.end_data;
  return { number: end?.block_number, origins: end?.origins ?? [], at: Date.parse(closed.closed_at ?? '') };
}

/** A stable UUID-shaped id from a text (two processes that saw the same reorg derive the same id). */
function derivedId(text: string): string {
  const hex = createHash('sha256').update(text).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
