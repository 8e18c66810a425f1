/**
 * The logs source of one (network, normalised filter). Follows the chain tracker's canonical chain:
 *   - per `head`: `eth_getLogs({blockHash, address?, topics?})` through the gateway's Forwarder
 *     (upstream-call.ts), then each log as one notification, in the origin's order; blocks are handled one
 *     at a time in head order, so logs arrive block by block;
 *   - the logs delivered per block are remembered for the last WINDOW_BLOCKS (128) blocks; on `reorg`
 *     every remembered block from the fork point on left the chain: its logs are sent again with
 *     `removed: true` (oldest block first, each block's logs in their order; they carry the removed
 *     block's hash), whether or not the origin (anvil does not) would say so. Heads from the fork point on
 *     that were still waiting are dropped unfetched: their logs were never sent;
 *   - a failed fetch (no healthy origin, an origin without the block yet, an error answer) is retried
 *     after `retryMs` (250 ms), doubling to at most `maxRetryMs` (5 s), and later blocks wait behind it;
 *     more than MAX_QUEUED_BLOCKS (1024, so a long back-fill burst fits) waiting heads drop the oldest with
 *     a warning (that block's logs are skipped). A tracker `gap` (heads never seen) skips those blocks'
 *     logs too, with a warning.
 * Logs whose `blockHash` is not the asked block's are dropped (an origin answering for another block).
 * Where each subscription starts (fanout.ts): a block's logs go only to subscriptions that started before
 * it; a block no subscription takes is not fetched. Removals go to every subscription (a client that read
 * the removed block's logs with eth_getLogs before subscribing hears of it too), and after a reorg every
 * subscription takes the new branch from the fork point on.
 */
import type { BlockHead, ChainReorg } from '../../chain/types.js';
import type { Logger } from '../../log.js';
import { Fanout, type Source } from './fanout.js';
import type { LogFilter } from './params.js';
import type { UpstreamCaller } from './upstream-call.js';

export const WINDOW_BLOCKS = 128;
export const MAX_QUEUED_BLOCKS = 1024;

export interface LogsTuning {
  /** First retry delay of a failed eth_getLogs (ms). */
  readonly retryMs: number;
  /** Longest retry delay (ms). */
  readonly maxRetryMs: number;
}

type Job =
  | { readonly kind: 'head'; readonly block: BlockHead }
  | { readonly kind: 'reorg'; readonly forkPoint: number };
type Log = Record<string, unknown>;

export class LogsSource implements Source {
  readonly fanout: Fanout;
  readonly #network: string;
  readonly #filter: LogFilter;
  readonly #upstream: UpstreamCaller;
  readonly #logger: Logger;
  readonly #tuning: LogsTuning;
  readonly #queue: Job[] = [];
  /** block number → the block's hash and the logs sent for it; ascending insertion order. */
  readonly #delivered = new Map<number, { hash: string; logs: Log[] }>();
  readonly #abort = new AbortController();
  #running = false;
  #timer: NodeJS.Timeout | undefined;
  #wake: (() => void) | undefined;
  #stopped = false;

  constructor(network: string, filter: LogFilter, upstream: UpstreamCaller, logger: Logger, tuning: LogsTuning) {
    this.fanout = new Fanout(logger);
    this.#network = network;
    this.#filter = filter;
    this.#upstream = upstream;
    this.#logger = logger;
    this.#tuning = tuning;
  }

  head(block: BlockHead): void {
    if (this.#stopped) return;
    this.#queue.push({ kind: 'head', block });
    let heads = this.#queue.filter((job) => job.kind === 'head').length;
    while (heads > MAX_QUEUED_BLOCKS) {
      const index = this.#queue.findIndex((job) => job.kind === 'head');
      const [dropped] = this.#queue.splice(index, 1);
      heads -= 1;
      this.#logger.warn('logs subscription fell behind: a block is skipped', {
        network: this.#network,
        block: dropped?.kind === 'head' ? dropped.block.number : undefined,
      });
    }
    this.#run();
  }

  reorg(reorg: ChainReorg): void {
    if (this.#stopped) return;
    // Waiting heads of the old branch are never fetched; their logs were never sent.
    for (let i = this.#queue.length - 1; i >= 0; i--) {
      const job = this.#queue[i];
      if (job?.kind === 'head' && job.block.number >= reorg.forkPoint) this.#queue.splice(i, 1);
    }
    this.#queue.push({ kind: 'reorg', forkPoint: reorg.forkPoint });
    this.#wake?.();
    this.#run();
  }

  gap(from: number, to: number): void {
    this.#logger.warn('logs subscription skips blocks the chain tracker never saw', {
      network: this.#network,
      from,
      to,
    });
  }

  stop(): void {
    this.#stopped = true;
    this.#queue.length = 0;
    this.#delivered.clear();
    this.#abort.abort();
    clearTimeout(this.#timer);
    this.#wake?.();
  }

  #run(): void {
    if (this.#running || this.#stopped) return;
    this.#running = true;
    void this.#drain();
  }

  async #drain(): Promise<void> {
    let delay = this.#tuning.retryMs;
    try {
      while (!this.#stopped) {
        const job = this.#queue[0];
        if (job === undefined) return;
        if (job.kind === 'reorg') {
          this.#queue.shift();
          this.#removeFrom(job.forkPoint);
          continue;
        }
        if (!this.fanout.wants(job.block.number)) {
          // Every subscription started after this block (SPEC §20): nobody takes its logs.
          this.#queue.shift();
          continue;
        }
        let logs: Log[] | undefined;
        try {
          logs = await this.#fetch(job.block);
        } catch (err) {
          if (this.#stopped) return;
          this.#logger.debug('eth_getLogs for a logs subscription failed; retrying', {
            network: this.#network,
            block: job.block.number,
            err,
          });
        }
        if (this.#stopped) return;
        if (this.#queue[0] !== job) continue; // a reorg took the block away meanwhile
        if (logs === undefined) {
          await this.#sleep(delay);
          delay = Math.min(delay * 2, this.#tuning.maxRetryMs);
          continue;
        }
        delay = this.#tuning.retryMs;
        this.#queue.shift();
        this.#deliver(job.block, logs);
      }
    } finally {
      // Runs synchronously when the queue runs empty without waiting, so the next head starts a new drain.
      this.#running = false;
    }
  }

  async #fetch(block: BlockHead): Promise<Log[]> {
    const filter: Record<string, unknown> = { blockHash: block.hash };
    if (this.#filter.address.length > 0) filter.address = this.#filter.address;
    if (this.#filter.topics.length > 0) filter.topics = this.#filter.topics;
    const result = await this.#upstream.call(this.#network, 'eth_getLogs', [filter], this.#abort.signal);
    if (!Array.isArray(result)) throw new Error('eth_getLogs answered no list');
    return result.filter(
      (log): log is Log =>
        log !== null &&
        typeof log === 'object' &&
        typeof (log as Log).blockHash === 'string' &&
        ((log as Log).blockHash as string).toLowerCase() === block.hash,
    );
  }

  #deliver(block: BlockHead, logs: Log[]): void {
    for (const log of logs) this.fanout.publish(JSON.stringify(log), block.number);
    this.#delivered.delete(block.number);
    this.#delivered.set(block.number, { hash: block.hash, logs });
    while (this.#delivered.size > WINDOW_BLOCKS) {
      const oldest = this.#delivered.keys().next().value;
      if (oldest === undefined) break;
      this.#delivered.delete(oldest);
    }
  }

  #removeFrom(forkPoint: number): void {
    const gone = [...this.#delivered.entries()].filter(([number]) => number >= forkPoint).sort(([a], [b]) => a - b);
    for (const [number, { logs }] of gone) {
      this.#delivered.delete(number);
      for (const log of logs) this.fanout.publish(JSON.stringify({ ...log, removed: true }));
    }
    this.fanout.rewind(forkPoint);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = () => {
        clearTimeout(this.#timer);
        this.#wake = undefined;
        resolve();
      };
      this.#timer = setTimeout(() => this.#wake?.(), ms);
      this.#timer.unref();
    });
  }
}
