/**
 * Every IPC message between the control process and its gateway workers (SPEC §11), in one place.
 * Carried by node:cluster's channel with `serialization: 'advanced'` (structured clone: undefined, nested
 * objects and arrays survive), in order per worker. Messages are plain data; `t` names the kind.
 *
 * Control → worker
 *   init         the worker's slot, the config and the whole current state (pools, health, chain)
 *   pools        the routing snapshot of pools, whole (sent at once on every directory change)
 *   health       every pool's and origin's health as routing reads it, whole (sent when it changed)
 *   chain-state  origin heads/earliest/syncing, network head, reported head, finalized, tracked origins
 *   chain-event  a canonical-chain event (head, reorg, gap, finalized), in the tracker's order
 *   state        a named extra state (e.g. `keys`, the gateway key snapshot): one handler per topic
 *   config       a reloaded config (SPEC §15) and, with `gateway.tls`, its certificate and key read again
 *   affinity     a read-your-writes or filter affinity entry a worker recorded, relayed to every worker
 *   reply        the answer to a worker's request (block lookup, lease) by id
 *   metrics-ask  scrape: the worker answers `metrics` with its registry's families
 *   shutdown     drain: close the listener within `graceMs` and exit
 *
 * Worker → control
 *   hello            the worker listens for messages: the control sends `init` only then (an ES module
 *                    worker loads asynchronously, and a message that arrives before a listener is lost)
 *   ready / failed   the listener is up (its URL) / the worker could not start (errno code if any)
 *   draining         the worker got SIGTERM/SIGINT itself (e.g. sent to the whole process group)
 *   health-reports   live failures and successes, batched, in order
 *   chain-feedback   heads seen, missing blocks, reported heads, networks touched — batched
 *   request          a request answered by `reply`: a block lookup, a trusted block (SPEC §18), a
 *                    rate-limit lease, a quota reserve
 *   report           a named report (e.g. `key-usage`: gateway key usage counts): one handler per topic
 *   affinity         an affinity entry just recorded (sent at once), for the control to relay
 *   metrics          the answer to `metrics-ask`
 */
import type { HeadBound } from '../chain/head-bound.js';
import type { BlockHead, ChainReorg, OriginChainState, TrustedBlock } from '../chain/types.js';
import type { Config } from '../config/schema.js';
import type { TlsPair } from '../config/tls-files.js';
import type { LeaseAsk } from '../gateway/rpc/lease-backend.js';
import type { QuotaAsk } from '../gateway/rpc/quota-backend.js';
import type { AffinityEntry } from '../gateway/upstream/affinity-share.js';
import type { MetricFamily } from '../metrics/registry.js';
import type { LiveFailureKind } from '../model/health-view.js';
import type { Pool } from '../model/pool.js';

/** Health as routing reads it: pool id → the pool's and each origin's verdict. */
export type PushedHealth = Record<string, { healthy: boolean; origins: Record<string, boolean> }>;

/** One network's part of the chain state. */
export interface PushedNetwork {
  head: number | undefined;
  reported: number | undefined;
  /** The head ceiling's bound, its `since` on the wall clock (chain/head-bound.ts); none: no limit. */
  bound?: HeadBound | undefined;
  finalized: BlockHead | undefined;
  /** The trust anchor's newest trusted block (SPEC §18, chain/trust.ts); other heights: an `anchor` request. */
  trusted?: TrustedBlock | undefined;
  /** The tracked origins: [pool id, origin name, usable now, its head comes by a live newHeads push]. */
  tracked: Array<[string, string, boolean, boolean]>;
}

/** What the control's chain tracker knows, as the replica needs it (no canonical window: see events). */
export interface PushedChain {
  networks: Record<string, PushedNetwork>;
  /** [pool id, origin name, state] of every tracked origin. */
  origins: Array<[string, string, OriginChainState]>;
}

export type ChainEventMessage =
  | { t: 'chain-event'; network: string; event: 'head'; block: BlockHead }
  | { t: 'chain-event'; network: string; event: 'reorg'; reorg: ChainReorg }
  | { t: 'chain-event'; network: string; event: 'gap'; from: number; to: number }
  | { t: 'chain-event'; network: string; event: 'finalized'; block: BlockHead };

export type ControlMessage =
  | {
      t: 'init';
      /** 1..workers: stable across restarts of that worker (log and metric label). */
      slot: number;
      config: Config;
      pools: Pool[];
      health: PushedHealth;
      chain: PushedChain;
      /** The canonical window of each network, oldest first. */
      canonical: Record<string, BlockHead[]>;
      /** Extra named states (state messages sent before this worker started). */
      states: Record<string, unknown>;
      /** The affinity entries relayed before this worker started that still count. */
      affinity: AffinityEntry[];
      /**
       * The control's wall clock minus this machine's (ms): a worker reads the control's time (the UTC
       * day of a key's quota, dates), 0 unless the control runs an injected clock.
       */
      clockOffsetMs: number;
    }
  | { t: 'pools'; pools: Pool[] }
  | { t: 'health'; health: PushedHealth }
  | { t: 'chain-state'; chain: PushedChain }
  | ChainEventMessage
  | { t: 'state'; topic: string; payload: unknown }
  | { t: 'config'; config: Config; tls: TlsPair | undefined }
  | { t: 'affinity'; entry: AffinityEntry }
  | { t: 'reply'; id: number; ok: true; value: unknown }
  | { t: 'reply'; id: number; ok: false; error: string }
  | { t: 'metrics-ask'; id: number }
  | { t: 'shutdown'; graceMs: number };

/** One live outcome on an origin: a failure (with its reason and kind) or a success. */
export type HealthReport =
  | { pool: string; origin: string; ok: false; reason: string; kind: LiveFailureKind | undefined }
  | { pool: string; origin: string; ok: true };

export interface ChainFeedbackBatch {
  /** [pool id, origin name, highest head seen] */
  saw: Array<[string, string, number]>;
  /** [pool id, origin name, block it lacks] in order */
  lacks: Array<[string, string, number]>;
  /** [network, highest head reported to a client] */
  reported: Array<[string, number]>;
  /** networks read by finality-dependent calls */
  touched: string[];
}

export type WorkerRequest =
  | { kind: 'block'; network: string; which: 'finalized' | number }
  | { kind: 'anchor'; network: string; number: number }
  | { kind: 'lease'; asks: LeaseAsk[] }
  | { kind: 'quota'; asks: QuotaAsk[] };

export type WorkerMessage =
  | { t: 'hello' }
  | { t: 'ready'; url: string }
  | { t: 'draining' }
  | { t: 'failed'; message: string; code: string | undefined }
  | { t: 'health-reports'; reports: HealthReport[] }
  | ({ t: 'chain-feedback' } & ChainFeedbackBatch)
  | { t: 'request'; id: number; request: WorkerRequest }
  | { t: 'report'; topic: string; payload: unknown }
  | { t: 'affinity'; entry: AffinityEntry }
  | { t: 'metrics'; id: number; families: MetricFamily[] };

/** Narrows what arrived on the channel to our messages (anything else, e.g. cluster internals, is ignored). */
export function isMessage<T extends { t: string }>(value: unknown): value is T {
  return typeof value === 'object' && value !== null && typeof (value as { t?: unknown }).t === 'string';
}
