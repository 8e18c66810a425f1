/**
 * `switchyard serve [--config FILE] [--gateway-listen HOST:PORT] [--api-listen HOST:PORT] [--data-dir DIR]`
 * (flags over SWITCHYARD_* variables over the file: config/overrides.ts; a bad config prints every problem
 * and exits 2): runs everything in one process until SIGTERM or SIGINT, then shuts down gracefully
 * (stop accepting, finish in-flight requests within `shutdown_grace`, stop the devnet's
 * anvil nodes, close the store). Signal handlers are installed before start-up, so a signal that arrives
 * while starting still shuts down cleanly once start-up is done. A second signal exits at once; the
 * devnet's exit handler and watchdog still stop the anvil nodes. With `gateway.workers` > 1 this process
 * is the control process and the gateway listener is served by worker processes (src/cluster/); the
 * shutdown drains them too, and a worker that gets the signal itself (sent to the process group) drains
 * on its own.
 *
 * SIGHUP reloads (SPEC §15): the config file is read again through the same pipeline, with the same
 * flags and environment, and handed to the running app (main/reload.ts: what applies live, what needs a
 * restart; an invalid file changes nothing). Reloads run one after another; a SIGHUP during start-up
 * reloads once start-up is done. `data_dir/serve.pid` names this process from the start until a clean
 * exit (pid-file.ts), so `switchyard reload` can find it.
 *
 * Started by npm (`npx switchyard serve`, `npm start`: npm_command is set), serve runs as npm → `sh -c`
 * → node, and a SIGTERM sent to npm's PID ends npm and the shell without reaching serve, which would
 * keep running (with its devnet) as an orphan. So under npm, serve also shuts down gracefully when its
 * parent process goes away (checked every PARENT_CHECK_MS, 500 ms).
 */
import { checkConfig, validConfig } from '../config/load.js';
import { configFileFrom } from '../config/overrides.js';
import { createLogger, type Logger, logFormatFor } from '../log.js';
import { type Switchyard, startSwitchyard } from '../main.js';
import { parseFlags } from './args.js';
import { writePidFile } from './pid-file.js';

export const SERVE_USAGE = [
  'usage: switchyard serve [--config FILE] [--gateway-listen HOST:PORT] [--api-listen HOST:PORT] [--data-dir DIR]',
  '',
  'Runs the gateway, the management API, the monitors and the notifications until SIGTERM or SIGINT.',
  'SIGHUP (or `switchyard reload`) re-reads the config file; data_dir/serve.pid names the process.',
  '  --config FILE                the config file (else $SWITCHYARD_CONFIG, else the built-in offline demo)',
  '  --gateway-listen HOST:PORT   the JSON-RPC listener (else $SWITCHYARD_GATEWAY_LISTEN, else gateway.listen)',
  '  --api-listen HOST:PORT       the management API listener (else $SWITCHYARD_API_LISTEN, else api.listen)',
  '  --data-dir DIR               the embedded store and mail outbox (else $SWITCHYARD_DATA_DIR, else data_dir)',
  'Every problem of the config file is printed at once (as `switchyard config check` does), exit 2.',
].join('\n');

const SERVE_FLAGS = {
  config: 'string',
  'gateway-listen': 'string',
  'api-listen': 'string',
  'data-dir': 'string',
} as const;

export async function serve(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, SERVE_FLAGS, 'serve');
  const file = configFileFrom(flags.config, process.env);
  const settings = {
    gatewayListen: flags['gateway-listen'],
    apiListen: flags['api-listen'],
    dataDir: flags['data-dir'],
  };
  const checked = checkConfig(file, { settings });
  const config = validConfig(checked);
  const logger = createLogger({ level: config.log_level, format: logFormatFor(config.log_format) });
  const reloads = new Reloads(logger, () => checkConfig(file, { settings }));
  process.on('SIGHUP', reloads.asked);
  const removePidFile = writePidFile(config.data_dir, (pid) =>
    logger.warn('serve.pid named another running serve; it now names this one', { pid }),
  );

  let signal: NodeJS.Signals | undefined;
  let wake: (() => void) | undefined;
  const onSignal = (name: NodeJS.Signals): void => {
    if (signal !== undefined) {
      logger.warn('second signal: exiting now', { signal: name });
      process.exit(130);
    }
    signal = name;
    wake?.();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const stopWatching = watchParentUnderNpm(() => {
    if (signal !== undefined) return;
    logger.warn('the npm process that started serve is gone; shutting down');
    onSignal('SIGTERM');
  });
  try {
    const app = await startSwitchyard({ config, logger, sources: checked.sources });
    reloads.serving(app);
    if (signal === undefined) {
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    logger.info('shutting down', { signal });
    reloads.stop();
    await app.close();
    return 0;
  } finally {
    stopWatching();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    process.off('SIGHUP', reloads.asked);
    removePidFile();
  }
}

/** SIGHUPs: each reads the file again and reloads the app; those before it serves wait for it. */
class Reloads {
  readonly #logger: Logger;
  readonly #read: () => ReturnType<typeof checkConfig>;
  #app: Switchyard | undefined;
  #pending = false;
  #stopped = false;

  constructor(logger: Logger, read: () => ReturnType<typeof checkConfig>) {
    this.#logger = logger;
    this.#read = read;
  }

  readonly asked = (): void => {
    if (this.#stopped) return;
    if (this.#app === undefined) {
      this.#pending = true;
      return;
    }
    this.#logger.info('SIGHUP: reloading the config file');
    // The app logs what the reload did (and every error of the file); a throw here would be a bug.
    this.#app.reload(this.#read()).catch((err: unknown) => this.#logger.error('config reload failed', { err }));
  };

  serving(app: Switchyard): void {
    this.#app = app;
    if (this.#pending) this.asked();
    this.#pending = false;
  }

  /** Shutting down: later SIGHUPs are ignored. */
  stop(): void {
    this.#stopped = true;
  }
}

const PARENT_CHECK_MS = 500;

/** Calls `onGone` once the parent process has exited, when npm started this process; else nothing. */
function watchParentUnderNpm(onGone: () => void): () => void {
  if (process.env.npm_command === undefined) return () => undefined;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, PARENT_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
