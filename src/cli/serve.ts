/**
 * `switchyard serve [--config FILE]`: runs everything in one process until SIGTERM or SIGINT, then shuts
 * down gracefully (stop accepting, finish in-flight requests within `shutdown_grace`, stop the devnet's
 * anvil nodes, close the store). A second signal while shutting down exits at once; the devnet's exit
 * handler and watchdog still stop the anvil nodes.
 */
import { loadConfig } from '../config/load.js';
import { createLogger } from '../log.js';
import { startSwitchyard } from '../main.js';
import { parseFlags } from './args.js';

export async function serve(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, { config: 'string' }, 'serve');
  const config = loadConfig(flags.config);
  const logger = createLogger({ level: config.log_level });
  const app = await startSwitchyard({ config, logger });

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (name: NodeJS.Signals): void => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      process.once('SIGTERM', () => process.exit(130));
      process.once('SIGINT', () => process.exit(130));
      resolve(name);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  logger.info('shutting down', { signal });
  await app.close();
  return 0;
}
