/**
 * What every start-up step of main.ts shares: the config, clock, logger and metrics registry, and the
 * undo stack. Each step that starts something registers how to stop it; `unwind()` (called by
 * `close()` and when a later step fails) first closes the listeners together — one `shutdown_grace`
 * for both, not one after the other — then stops everything else in reverse order of start, logging
 * (not throwing) what fails to stop so the rest still stops.
 */
import { type Clock, systemClock } from '../clock.js';
import type { SettingSource } from '../config/overrides.js';
import type { Config } from '../config/schema.js';
import { createLogger, type Logger, logFormatFor } from '../log.js';
import type { SwitchyardOptions } from '../main.js';
import { registerBuildInfo } from '../metrics/build-info.js';
import { registerProcessMetrics } from '../metrics/process.js';
import { MetricsRegistry } from '../metrics/registry.js';

type Stop = () => Promise<void> | void;

export class StartUp {
  readonly options: SwitchyardOptions;
  readonly config: Readonly<Config>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics = new MetricsRegistry();
  readonly #listeners: Stop[] = [];
  readonly #stops: Stop[] = [];

  constructor(options: SwitchyardOptions) {
    this.options = options;
    this.config = options.config;
    this.clock = options.clock ?? systemClock;
    const { log_level: level, log_format: format } = options.config;
    this.logger = options.logger ?? createLogger({ level, format: logFormatFor(format), clock: this.clock });
    // This process's CPU, memory and event loop (each gateway worker adds its own); the build once.
    registerProcessMetrics(this.metrics);
    registerBuildInfo(this.metrics);
  }

  /** The logger of one part (`part` in every line). */
  part(name: string): Logger {
    return this.logger.child({ part: name });
  }

  /** Registers how to stop what a step started (stopped in reverse order, after the listeners). */
  onStop(stop: Stop): void {
    this.#stops.push(stop);
  }

  /** Registers how to close a listener (all listeners close together, first). */
  onClose(close: Stop): void {
    this.#listeners.push(close);
  }

  async unwind(): Promise<void> {
    await Promise.all(this.#listeners.splice(0).map((close) => this.#guarded(close)));
    for (const stop of this.#stops.splice(0).reverse()) await this.#guarded(stop);
  }

  async #guarded(stop: Stop): Promise<void> {
    try {
      await stop();
    } catch (err) {
      this.logger.error('error while stopping', { err });
    }
  }
}

/**
 * A listener that cannot bind fails start-up with a message naming the address asked for, where it was
 * set (flag, environment variable, config key or the default) and how to choose another.
 */
export async function bound<T>(
  key: 'gateway.listen' | 'api.listen',
  address: string,
  source: SettingSource | undefined,
  starting: Promise<T>,
): Promise<T> {
  try {
    return await starting;
  } catch (err) {
    const why = bindFailure((err as NodeJS.ErrnoException).code);
    if (why === undefined) throw err;
    const from = source ?? { label: key, change: `set ${key} in a config file` };
    throw new Error(`${key}: ${address} (set by ${from.label}) ${why} ${from.change}`, { cause: err });
  }
}

function bindFailure(code: string | undefined): string | undefined {
  if (code === 'EADDRINUSE') return 'is already in use by another process; stop that process or';
  if (code === 'EACCES') return 'needs privileges to bind (ports below 1024);';
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return 'is not an address of this machine;';
  return undefined;
}
