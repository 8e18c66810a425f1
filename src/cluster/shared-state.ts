/**
 * The named states and reports between the control process and its gateway workers that are not
 * routing state (publisher.ts carries those): gateway keys and the store's readiness (SPEC §11).
 *
 * - `keys` (control → workers): the key table's snapshot (model/gateway-keys.ts), in each worker's
 *   `init` and again at once after every change of the control's table (an API write, or the 250 ms
 *   store poll, or a Redis notice), so a revoked key is refused by every worker as soon as the control
 *   knows it. A worker loads it into a StaticKeyTable, which closes the key's WebSocket connections.
 * - `key-usage` (workers → control): each worker counts its keys' calls (UsageBatch) and sends the counts
 *   every USAGE_FLUSH_MS (1 s) and when it stops; the control adds them to its usage recorder, which
 *   flushes to the store. A worker that crashes loses at most its last second of counts.
 * - `origin-stats` (workers → control): each worker's per-origin counters (stats/origin-stats.ts),
 *   drained and sent every STATS_REPORT_MS (1 s) and when it stops; the control adds them to its own,
 *   which its StatsRecorder flushes to the store.
 * - `origin-scores` (workers → control): what each worker's score book counted (routing/scores/,
 *   SPEC §17), drained and sent every STATS_REPORT_MS (1 s) and when it stops; the control adds them to
 *   its book, which /metrics (`switchyard_origin_score`) and the origin stats API read.
 * - `origin-probes` (control → workers): the monitor probes' outcomes the control's book kept, sent
 *   every STATS_REPORT_MS when there are any; each worker adopts them into its own book, so its
 *   steering and hedging see the probes too (its own traffic it counts itself).
 * - `verify-failures` (workers → control): each origin answer that failed verification (SPEC §18,
 *   model/verify-failures.ts), sent at once (they are rare); the control hands them to its integrity
 *   alert (incidents/integrity.ts), which records the incident.
 * - `store` (control → workers): whether the store answers, as the control's probe says (checked every
 *   STORE_CHECK_MS, 1 s; pushed when it changes), for the workers' `GET /readyz`.
 */
import type { GatewayKeySnapshot, GatewayKeyTable, KeyUsageSink } from '../model/gateway-keys.js';
import { probeSamplesOf, type ScoreReportRow, scoreRowsOf } from '../model/origin-score.js';
import { type OriginStatsCollector, statsRowsOf } from '../model/origin-stats.js';
import type { StoreReadiness } from '../model/readiness.js';
import { type VerifyFailureSink, verifyFailuresOf } from '../model/verify-failures.js';

export const KEYS_TOPIC = 'keys';
export const USAGE_TOPIC = 'key-usage';
export const STORE_TOPIC = 'store';
export const STATS_TOPIC = 'origin-stats';
export const SCORES_TOPIC = 'origin-scores';
export const PROBES_TOPIC = 'origin-probes';
export const VERIFY_TOPIC = 'verify-failures';
export const USAGE_FLUSH_MS = 1_000;
export const STATS_REPORT_MS = 1_000;
export const STORE_CHECK_MS = 1_000;

/** A usage report: [key id, network, calls ok, calls answered with an error]. */
type UsageReportRow = [string, string, number, number];

/** Where the control's side publishes (cluster/control.ts: the StatePublisher). */
interface Publish {
  publishState(topic: string, payload: unknown): void;
  onReport(topic: string, handler: (payload: unknown) => void): void;
}

/**
 * Control side: publishes the key table (now and on every change) and the store's readiness (now and
 * when it changes), and adds the workers' usage reports to `usage`. Returns the stop function.
 */
export function shareWithWorkers(
  publisher: Publish,
  parts: {
    keys?: { table: GatewayKeyTable; usage: KeyUsageSink } | undefined;
    store: StoreReadiness;
    stats?: OriginStatsCollector | undefined;
    scores?: ControlScores | undefined;
    verifyFailures?: VerifyFailureSink | undefined;
  },
): () => void {
  const stops: Array<() => void> = [];
  const failures = parts.verifyFailures;
  if (failures !== undefined) {
    publisher.onReport(VERIFY_TOPIC, (payload) => {
      for (const report of verifyFailuresOf(payload)) failures.failed(report);
    });
  }
  const stats = parts.stats;
  if (stats !== undefined) publisher.onReport(STATS_TOPIC, (payload) => stats.add(statsRowsOf(payload)));
  const scores = parts.scores;
  if (scores !== undefined) {
    publisher.onReport(SCORES_TOPIC, (payload) => scores.add(scoreRowsOf(payload)));
    const relay = setInterval(() => {
      const samples = scores.drainProbes();
      if (samples.length > 0) publisher.publishState(PROBES_TOPIC, samples);
    }, STATS_REPORT_MS);
    relay.unref();
    stops.push(() => clearInterval(relay));
  }
  const keys = parts.keys;
  if (keys !== undefined) {
    publisher.publishState(KEYS_TOPIC, keys.table.snapshot());
    stops.push(keys.table.onChange(() => publisher.publishState(KEYS_TOPIC, keys.table.snapshot())));
    publisher.onReport(USAGE_TOPIC, (payload) => addUsage(keys.usage, payload));
  }
  let ready: boolean | undefined;
  const check = async (): Promise<void> => {
    const now = await Promise.resolve(parts.store.storeReady()).catch(() => false);
    if (now === ready) return;
    ready = now;
    publisher.publishState(STORE_TOPIC, now);
  };
  void check();
  const timer = setInterval(() => void check(), STORE_CHECK_MS);
  timer.unref();
  stops.push(() => clearInterval(timer));
  return () => {
    for (const stop of stops) stop();
  };
}

/** The control's score book as the sharing needs it (routing/scores/score-book.ts). */
interface ControlScores {
  add(rows: readonly ScoreReportRow[]): void;
  drainProbes(): unknown[];
}

/** Worker side: adopts a relayed batch of probe samples into the worker's score book. */
export function adoptProbes(
  scores: { adopt(poolId: string, originName: string, outcome: 'ok' | 'error' | 'throttled', ms: number): void },
  payload: unknown,
): void {
  for (const [poolId, originName, outcome, ms] of probeSamplesOf(payload))
    scores.adopt(poolId, originName, outcome, ms);
}

/** Worker side: sends the worker's score counts to the control every STATS_REPORT_MS. Returns stop (sends the rest). */
export function reportScores(scores: { drain(): ScoreReportRow[] }, send: (payload: unknown) => void): () => void {
  return reportDrained(() => scores.drain(), send);
}

/** Adds one worker's usage report to the control's sink; rows that are not well formed are skipped. */
function addUsage(usage: KeyUsageSink, payload: unknown): void {
  if (!Array.isArray(payload)) return;
  for (const row of payload as unknown[]) {
    if (!Array.isArray(row) || row.length !== 4) continue;
    const [keyId, network, ok, failed] = row as unknown[];
    if (typeof keyId !== 'string' || typeof network !== 'string') continue;
    const good = Number(ok);
    const bad = Number(failed);
    if (Number.isSafeInteger(good) && good > 0) usage.count(keyId, network, true, good);
    if (Number.isSafeInteger(bad) && bad > 0) usage.count(keyId, network, false, bad);
  }
}

/** Worker side: a KeyUsageSink that sends its counts to the control every USAGE_FLUSH_MS and on flush(). */
export class UsageBatch implements KeyUsageSink {
  readonly #send: (rows: UsageReportRow[]) => void;
  /** `${keyId}\n${network}` → [ok, failed] */
  #counts = new Map<string, [number, number]>();
  readonly #timer: NodeJS.Timeout;

  constructor(send: (rows: UsageReportRow[]) => void) {
    this.#send = send;
    this.#timer = setInterval(() => this.flush(), USAGE_FLUSH_MS);
    this.#timer.unref();
  }

  count(keyId: string, network: string, ok: boolean): void {
    const id = `${keyId}\n${network}`;
    let counts = this.#counts.get(id);
    if (counts === undefined) {
      counts = [0, 0];
      this.#counts.set(id, counts);
    }
    counts[ok ? 0 : 1] += 1;
  }

  /** Sends what was counted since the last flush. */
  flush(): void {
    if (this.#counts.size === 0) return;
    const rows: UsageReportRow[] = [];
    for (const [id, [ok, failed]] of this.#counts) {
      const cut = id.indexOf('\n');
      rows.push([id.slice(0, cut), id.slice(cut + 1), ok, failed]);
    }
    this.#counts = new Map();
    this.#send(rows);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.flush();
  }
}

/** Worker side: the store's readiness as the control last pushed it (not ready until it has). */
export class PushedStoreReadiness implements StoreReadiness {
  #ready = false;

  set(payload: unknown): void {
    this.#ready = payload === true;
  }

  storeReady(): boolean {
    return this.#ready;
  }
}

/** Worker side: reads a pushed key snapshot (a garbled one is ignored: the table keeps its keys). */
export function keySnapshot(payload: unknown): GatewayKeySnapshot | undefined {
  const snapshot = payload as GatewayKeySnapshot | undefined;
  if (typeof snapshot?.version !== 'string' || !Array.isArray(snapshot.keys)) return undefined;
  return snapshot;
}

/** Worker side: sends the worker's per-origin counters to the control every STATS_REPORT_MS. Returns stop (sends the rest). */
export function reportStats(stats: OriginStatsCollector, send: (payload: unknown) => void): () => void {
  return reportDrained(() => stats.drain(), send);
}

/** Sends what `drain` gives (when there is anything) every STATS_REPORT_MS. Returns stop (sends the rest). */
function reportDrained(drain: () => readonly unknown[], send: (payload: unknown) => void): () => void {
  const flush = (): void => {
    const rows = drain();
    if (rows.length > 0) send(rows);
  };
  const timer = setInterval(flush, STATS_REPORT_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    flush();
  };
}
