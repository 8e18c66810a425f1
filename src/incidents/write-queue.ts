/**
 * The incidents' store writes, in order, one at a time (detector.ts, integrity.ts): a write that fails
 * (throws) stays first in the queue and is retried at the next `drain` (the owners drain on each check),
 * so a store outage delays alerts but loses none. A write resolves true when it recorded something new;
 * after a drain that recorded anything, `onRecorded` runs (main.ts wakes the notification service).
 * `stop` drops what is still queued and waits for the write under way.
 */
import type { Logger } from '../log.js';

export type Write = () => Promise<boolean>;

export class WriteQueue {
  readonly #logger: Logger;
  readonly #onRecorded: (() => void) | undefined;
  readonly #queue: Write[] = [];
  #draining: Promise<void> | undefined;
  #stopped = false;

  constructor(logger: Logger, onRecorded?: () => void) {
    this.#logger = logger;
    this.#onRecorded = onRecorded;
  }

  enqueue(write: Write): void {
    if (!this.#stopped) this.#queue.push(write);
  }

  drain(): void {
    if (this.#draining !== undefined || this.#queue.length === 0) return;
    this.#draining = (async () => {
      let wrote = false;
      while (this.#queue.length > 0) {
        const write = this.#queue[0] as Write;
        try {
          if (await write()) wrote = true;
          this.#queue.shift();
        } catch (err) {
          this.#logger.error('recording a chain incident failed; retrying at the next check', { err });
          break;
        }
      }
      if (wrote) this.#onRecorded?.();
    })().finally(() => {
      this.#draining = undefined;
    });
  }

  /** Resolves when every queued write is done (tests). */
  async settled(): Promise<void> {
    while (this.#draining !== undefined) await this.#draining;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#queue.length = 0;
    await this.#draining;
  }
}
