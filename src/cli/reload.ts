/**
 * `switchyard reload [--config FILE] [--data-dir DIR]` (SPEC §15): asks the running `serve` to re-read
 * its config file, by sending it SIGHUP. `serve` is found through `data_dir/serve.pid` (pid-file.ts),
 * `data_dir` read as every command reads it (only that key: with-store.ts). What the reload did is in
 * serve's log and metrics (`switchyard_config_reloads_total`, `…_reload_failures_total`); run
 * `switchyard config check` first to see the file's problems here. With several instances, each reloads
 * on its own signal (docs/operations.md). Exit 0 signalled, 1 no running serve found (a missing or
 * stale serve.pid: the message says which) or the signal refused.
 */
import { parseFlags } from './args.js';
import { findServe } from './pid-file.js';
import { CONFIG_FLAGS, commandConfig } from './with-store.js';

export const RELOAD_USAGE = [
  'usage: switchyard reload [--config FILE] [--data-dir DIR]',
  '',
  'Sends SIGHUP to the serve running with this data_dir (found through data_dir/serve.pid): it re-reads',
  'its config file and applies what reloads live (docs/configuration.md "What reloads live").',
].join('\n');

export async function reload(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, CONFIG_FLAGS, 'reload');
  const config = commandConfig(flags, ['data_dir']);
  const found = findServe(config.data_dir);
  if ('problem' in found) {
    process.stderr.write(`switchyard reload: ${found.problem}\n`);
    return 1;
  }
  try {
    process.kill(found.pid, 'SIGHUP');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    process.stderr.write(`switchyard reload: cannot signal serve (pid ${found.pid}): ${code}\n`);
    return 1;
  }
  process.stdout.write(`sent SIGHUP to serve (pid ${found.pid}); its log says what the reload applied\n`);
  return 0;
}
