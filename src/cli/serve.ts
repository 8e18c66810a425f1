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
 * Started by npm (`npx switchyard serve`, `npm start`: npm_command is set), serve runs as npm → `sh -c`
 * → node, and a SIGTERM sent to npm's PID ends npm and the shell without reaching serve, which would
 * keep running (with its devnet) as an orphan. So under npm, serve also shuts down gracefully when its
 * parent process goes away (checked every PARENT_CHECK_MS, 500 ms).
 */
import { checkConfig, validConfig } from '../config/load.js';
import { configFileFrom } from '../config/overrides.js';
import { createLogger, logFormatFor } from '../log.js';
import { startSwitchyard } from '../main.js';
import { parseFlags } from './args.js';

export const SERVE_USAGE = [
  'usage: switchyard serve [--config FILE] [--gateway-listen HOST:PORT] [--api-listen HOST:PORT] [--data-dir DIR]',
  '',
  'Runs the gateway, the management API, the monitors and the notifications until SIGTERM or SIGINT.',
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
  const checked = checkConfig(configFileFrom(flags.config, process.env), {
    settings: { gatewayListen: flags['gateway-listen'], apiListen: flags['api-listen'], dataDir: flags['data-dir'] },
  });
  const config = validConfig(checked);
  const logger = createLogger({ level: config.log_level, format: logFormatFor(config.log_format) });

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
    if (signal === undefined) {
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    logger.info('shutting down', { signal });
    await app.close();
    return 0;
  } finally {
    stopWatching();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
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
