/**
 * An in-memory copy of store rows kept current by one reload at a time — the store-backed pool
 * directory (pools/store-directory.ts) and key table (keys/store-key-directory.ts):
 * - `refresh()` reloads now (after an in-process write); a call while a reload runs makes that reload run
 *   once more when it ends, and shares its promise, so a caller never sees a copy older than its write;
 * - `poll(changed)` (on a timer) asks a cheap fingerprint query whether the rows changed, and reloads
 *   when they did; skipped while a reload runs.
 * Neither throws: a failing store is logged once per outage (`failed`, then `recovered` when it answers
 * again) and the last copy stays in use.
 */
import type { Logger } from '../log.js';

export interface PolledReloadOptions {
  reload: () => Promise<void>;
  logger: Logger;
  /** The error line when the store fails, once per outage, e.g. "pool directory: cannot read pools; …". */
  failed: string;
  /** The info line when it answers again. */
  recovered: string;
}

export class PolledReload {
  readonly #options: PolledReloadOptions;
  #running: Promise<void> | undefined;
  #again = false;
  #failing = false;

  constructor(options: PolledReloadOptions) {
    this.#options = options;
  }

  refresh(): Promise<void> {
    if (this.#running !== undefined) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      try {
        do {
          this.#again = false;
          await this.#guarded(this.#options.reload);
        } while (this.#again);
      } finally {
        this.#running = undefined;
      }
    })();
    return this.#running;
  }

  async poll(changed: () => Promise<boolean>): Promise<void> {
    if (this.#running !== undefined) return;
    await this.#guarded(async () => {
      if (await changed()) await this.refresh();
    });
  }

  async #guarded(work: () => Promise<void>): Promise<void> {
    try {
      await work();
      if (this.#failing) this.#options.logger.info(this.#options.recovered);
      this.#failing = false;
    } catch (err) {
      if (!this.#failing) this.#options.logger.error(this.#options.failed, { err });
      this.#failing = true;
    }
  }
}

/** Two fingerprints (row id → version) are the same rows at the same versions. */
export function sameVersions(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): boolean {
  if (a.size !== b.size) return false;
  for (const [id, version] of a) if (b.get(id) !== version) return false;
  return true;
}
