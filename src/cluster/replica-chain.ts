/**
 * A gateway worker's chain (SPEC §9 as seen from a worker, SPEC §11): what the gateway uses of the chain
 * tracker (gateway/chain-port.ts), fed by the control process's tracker, which alone polls origins.
 *
 * Reads (synchronous, on the hot path) come from the last `chain-state` push: each origin's head, hash,
 * earliest block, syncing and refused flags, each network's head, reported head, head ceiling bound
 * (its ceiling computed here on the wall clock the control stamped it with: chain/head-bound.ts) and
 * finalized block, and which origins are tracked (and usable) per network. The control pushes it every CHAIN_PUSH_MS (250 ms) when
 * it changed and right after each chain event, so a worker lags the tracker by at most that plus IPC.
 *
 * Events (head, reorg, gap, finalized) arrive in the tracker's order, as they happen; the replica keeps
 * the canonical window from them (up to 128 blocks, like the tracker) and tells its listeners (the
 * subscription hub, the cache's finality) synchronously, with the tracker's guarantees.
 *
 * Feedback (answers revealing heads or missing blocks, heads reported to clients, finality demand) is
 * applied locally at once where a read depends on it (an origin's head only rises, never above a head
 * ceiling of its networks nor for a refused origin; the reported head is the max of local and pushed,
 * never above the ceiling) and sent to the control (whose tracker counts numbers above the ceiling), batched every FEEDBACK_FLUSH_MS (50 ms): heads as
 * the max per origin or network, missing blocks in order, `touch` at most once per TOUCH_EVERY_MS (1 s)
 * per network. `block()` asks the control's tracker (a request with a BLOCK_TIMEOUT_MS bound, 10 s).
 *
 * Trust anchor (SPEC §18): the newest trusted block comes with each `chain-state` push; a trusted block at
 * another height is asked of the control's tracker (`anchor`, the same bound) and kept (at most
 * ANCHORS_KEPT per network, the oldest asked go first; a reorg drops those at and above its fork point).
 */
import { ceiling } from '../chain/head-bound.js';
import type { TrackedOrigin } from '../chain/tracker.js';
import type { BlockHead, ChainListener, OriginChainState, TrustedBlock } from '../chain/types.js';
import type { Clock } from '../clock.js';
import type { GatewayChain } from '../gateway/chain-port.js';
import type { Logger } from '../log.js';
import type { Pool, PoolDirectory } from '../model/pool.js';
import type { ChainEventMessage, ChainFeedbackBatch, PushedChain, PushedNetwork, WorkerRequest } from './messages.js';

export const FEEDBACK_FLUSH_MS = 50;
export const TOUCH_EVERY_MS = 1000;
export const BLOCK_TIMEOUT_MS = 10_000;
export const ANCHORS_KEPT = 256;
const WINDOW = 128;

interface ReplicaOriginState {
  head: number | undefined;
  hash: string | undefined;
  earliest: number;
  syncing: boolean;
  refused: boolean;
}

export interface ReplicaChainOptions {
  directory: PoolDirectory;
  clock: Clock;
  logger: Logger;
  chain: PushedChain;
  canonical: Record<string, BlockHead[]>;
  feedback(batch: ChainFeedbackBatch): void;
  request(request: WorkerRequest, timeoutMs: number): Promise<unknown>;
}

export class ReplicaChain implements GatewayChain {
  readonly #options: ReplicaChainOptions;
  #networks: Record<string, PushedNetwork> = {};
  #origins = new Map<string, Map<string, ReplicaOriginState>>();
  readonly #canonical = new Map<string, BlockHead[]>();
  readonly #localReported = new Map<string, number>();
  readonly #listeners = new Set<ChainListener>();
  readonly #touchedAt = new Map<string, number>();
  /** network → height → trusted block the control's anchor gave */
  readonly #anchors = new Map<string, Map<number, TrustedBlock>>();
  #poolsById = new Map<string, Pool>();
  #batch: ChainFeedbackBatch = emptyBatch();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  readonly #unsubscribe: () => void;

  constructor(options: ReplicaChainOptions) {
    this.#options = options;
    this.replace(options.chain);
    for (const [network, blocks] of Object.entries(options.canonical)) this.#canonical.set(network, [...blocks]);
    this.#indexPools();
    this.#unsubscribe = options.directory.onChange(() => this.#indexPools());
  }

  /** A `chain-state` push. */
  replace(chain: PushedChain): void {
    this.#networks = chain.networks;
    const origins = new Map<string, Map<string, ReplicaOriginState>>();
    for (const [poolId, name, state] of chain.origins) {
      let byName = origins.get(poolId);
      if (byName === undefined) {
        byName = new Map();
        origins.set(poolId, byName);
      }
      byName.set(name, { ...state });
    }
    this.#origins = origins;
  }

  /** A `chain-event`: keeps the canonical window, then tells the listeners. */
  event(message: ChainEventMessage): void {
    if (this.#stopped) return;
    const { network } = message;
    let window = this.#canonical.get(network);
    if (window === undefined) {
      window = [];
      this.#canonical.set(network, window);
    }
    switch (message.event) {
      case 'head':
        window.push(message.block);
        if (window.length > WINDOW) window.splice(0, window.length - WINDOW);
        this.#emit((l) => l.head?.(network, message.block));
        break;
      case 'reorg': {
        const forkPoint = message.reorg.forkPoint;
        const kept = window.filter((block) => block.number < forkPoint);
        window.splice(0, window.length, ...kept);
        const anchors = this.#anchors.get(network);
        for (const number of anchors?.keys() ?? []) if (number >= forkPoint) anchors?.delete(number);
        this.#emit((l) => l.reorg?.(network, message.reorg));
        break;
      }
      case 'gap':
        this.#emit((l) => l.gap?.(network, message.from, message.to));
        break;
      case 'finalized': {
        const held = this.#networks[network];
        if (held !== undefined) held.finalized = message.block;
        this.#emit((l) => l.finalized?.(network, message.block));
        break;
      }
    }
  }

  start(): void {}

  stop(): void {
    this.#stopped = true;
    this.#unsubscribe();
    this.flush();
  }

  addListener(listener: ChainListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // ── ChainView ──

  networkHead(network: string): number | undefined {
    return this.#networks[network]?.head;
  }

  origin(poolId: string, originName: string): OriginChainState | undefined {
    return this.#origins.get(poolId)?.get(originName);
  }

  reportedHead(network: string): number | undefined {
    const pushed = this.#networks[network]?.reported;
    const local = this.#localReported.get(network);
    if (pushed === undefined) return local;
    return local === undefined || pushed > local ? pushed : local;
  }

  headCeiling(network: string): number | undefined {
    const bound = this.#networks[network]?.bound;
    return bound === undefined ? undefined : ceiling(bound, this.#options.clock.now());
  }

  // ── ChainFeedback ──

  sawHead(poolId: string, originName: string, number: number): void {
    const state = this.#origins.get(poolId)?.get(originName);
    if (state === undefined) return;
    if (
      !state.refused &&
      (state.head === undefined || number > state.head) &&
      !this.#beyondCeiling(poolId, originName, number)
    ) {
      state.head = number;
      state.hash = undefined;
    }
    // The control judges it too (and counts a number above the ceiling).
    const saw = this.#batch.saw.find(([pool, origin]) => pool === poolId && origin === originName);
    if (saw === undefined) this.#batch.saw.push([poolId, originName, number]);
    else if (number > saw[2]) saw[2] = number;
    this.#schedule();
  }

  lacksBlock(poolId: string, originName: string, number: number): void {
    if (!this.#origins.get(poolId)?.has(originName)) return;
    this.#batch.lacks.push([poolId, originName, number]);
    this.#schedule();
  }

  reported(network: string, number: number): void {
    const held = this.reportedHead(network);
    if ((held !== undefined && number <= held) || number > (this.headCeiling(network) ?? Number.POSITIVE_INFINITY))
      return;
    this.#localReported.set(network, number);
    const entry = this.#batch.reported.find(([name]) => name === network);
    if (entry === undefined) this.#batch.reported.push([network, number]);
    else if (number > entry[1]) entry[1] = number;
    this.#schedule();
  }

  // ── Finality (the response cache) ──

  touch(network: string): void {
    const now = this.#options.clock.now();
    const last = this.#touchedAt.get(network);
    if (last !== undefined && now - last < TOUCH_EVERY_MS) return;
    this.#touchedAt.set(network, now);
    this.#batch.touched.push(network);
    this.#schedule();
  }

  finalized(network: string): BlockHead | undefined {
    return this.#networks[network]?.finalized;
  }

  async block(network: string, which: 'finalized' | number): Promise<BlockHead | undefined> {
    const answer = await this.#options.request({ kind: 'block', network, which }, BLOCK_TIMEOUT_MS);
    return (answer ?? undefined) as BlockHead | undefined;
  }

  // ── Trust anchor (SPEC §18) ──

  trustedTip(network: string): TrustedBlock | undefined {
    return this.#networks[network]?.trusted;
  }

  trustedHash(network: string, number: number): string | undefined {
    const tip = this.trustedTip(network);
    return tip?.number === number ? tip.hash : this.#anchors.get(network)?.get(number)?.hash;
  }

  async anchor(network: string, number: number): Promise<TrustedBlock | undefined> {
    const tip = this.trustedTip(network);
    if (tip?.number === number) return tip;
    const held = this.#anchors.get(network)?.get(number);
    if (held !== undefined) return held;
    const answer = (await this.#options.request({ kind: 'anchor', network, number }, BLOCK_TIMEOUT_MS)) as
      | TrustedBlock
      | null
      | undefined;
    if (answer === null || answer === undefined) return undefined;
    let anchors = this.#anchors.get(network);
    if (anchors === undefined) {
      anchors = new Map();
      this.#anchors.set(network, anchors);
    }
    anchors.set(number, answer);
    if (anchors.size > ANCHORS_KEPT) anchors.delete(anchors.keys().next().value as number);
    return answer;
  }

  // ── Listings ──

  canonical(network: string): BlockHead[] {
    return [...(this.#canonical.get(network) ?? [])];
  }

  canonicalHead(network: string): BlockHead | undefined {
    return this.#canonical.get(network)?.at(-1);
  }

  canonicalHash(network: string, number: number): string | undefined {
    const window = this.#canonical.get(network);
    const low = window?.[0]?.number;
    return low === undefined || number < low ? undefined : window?.[number - low]?.hash;
  }

  networks(): string[] {
    return Object.keys(this.#networks);
  }

  trackedOrigins(network: string): TrackedOrigin[] {
    const out: TrackedOrigin[] = [];
    for (const [poolId, name, usable, pushing] of this.#networks[network]?.tracked ?? []) {
      const pool = this.#poolsById.get(poolId);
      const origin = pool?.origins.find((candidate) => candidate.name === name);
      const state = this.#origins.get(poolId)?.get(name);
      if (pool !== undefined && origin !== undefined && state !== undefined)
        out.push({ pool, origin, state, usable, pushing });
    }
    return out;
  }

  /** Sends the feedback queued now (also on stop). */
  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#batch;
    if (batch.saw.length + batch.lacks.length + batch.reported.length + batch.touched.length === 0) return;
    this.#batch = emptyBatch();
    this.#options.feedback(batch);
  }

  #schedule(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => this.flush(), FEEDBACK_FLUSH_MS);
    this.#timer.unref();
  }

  /** Whether `number` lies above the head ceiling of a network that tracks the origin. */
  #beyondCeiling(poolId: string, originName: string, number: number): boolean {
    for (const [network, pushed] of Object.entries(this.#networks)) {
      if (pushed.bound === undefined || !pushed.tracked.some(([pool, name]) => pool === poolId && name === originName))
        continue;
      if (number > (this.headCeiling(network) ?? Number.POSITIVE_INFINITY)) return true;
    }
    return false;
  }

  #indexPools(): void {
    this.#poolsById = new Map(this.#options.directory.allPools().map((pool) => [pool.id, pool]));
  }

  #emit(call: (listener: ChainListener) => void): void {
    for (const listener of this.#listeners) {
      try {
        call(listener);
      } catch (err) {
        this.#options.logger.error('chain listener failed', { err });
      }
    }
  }
}

function emptyBatch(): ChainFeedbackBatch {
  return { saw: [], lacks: [], reported: [], touched: [] };
}
