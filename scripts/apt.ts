/**
 * Installing Debian packages for the test suite (scripts/ensure-system.ts) and the benchmark
 * (bench/tools.ts): with apt-get, as root or through sudo that needs no password (`sudo -n`), never
 * asking for one. `apt-get update` runs first, since a fresh machine may have no package lists; each
 * step is bounded (update 5 min, install 15 min), so a hung mirror cannot hang a run forever.
 *
 * Whether it worked is for the caller to decide by looking again for what it needed, not by apt-get's
 * exit status: a package's own service may fail to start in a container (postgresql-15 without a
 * policy-rc.d) after its files are in place.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** How this process may run apt-get: as root, through passwordless sudo, or not at all (and why). */
export type AptAccess = { how: 'root' } | { how: 'sudo' } | { how: 'none'; why: string };

/** Runs a command to its end (bounded) and gives its exit status, null when it did not exit by itself. */
export type RunCommand = (command: string, args: readonly string[], timeoutMs: number) => number | null;

const UPDATE_TIMEOUT_MS = 300_000;
const INSTALL_TIMEOUT_MS = 900_000;
const SUDO_CHECK_TIMEOUT_MS = 10_000;

/** The executable `name` on PATH (or in the sbin directories a non-root PATH often lacks), else undefined. */
export function onPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of [...path.split(delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin']) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

export const runCommand: RunCommand = (command, args, timeoutMs) =>
  spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], timeout: timeoutMs }).status;

const quietRun: RunCommand = (command, args, timeoutMs) =>
  spawnSync(command, args, { stdio: 'ignore', timeout: timeoutMs }).status;

/** Finds out whether apt-get can be run here without a person typing a password. */
export function aptAccess(run: RunCommand = quietRun): AptAccess {
  if (onPath('apt-get') === undefined) return { how: 'none', why: 'apt-get is not available (not a Debian machine?)' };
  if (typeof process.getuid === 'function' && process.getuid() === 0) return { how: 'root' };
  if (onPath('sudo') === undefined) return { how: 'none', why: 'not root, and sudo is not installed' };
  if (run('sudo', ['-n', 'true'], SUDO_CHECK_TIMEOUT_MS) === 0) return { how: 'sudo' };
  return { how: 'none', why: 'not root, and sudo asks for a password' };
}

/** The command a person runs to install `packages`, for messages. */
export function installCommand(packages: readonly string[]): string {
  return `sudo apt-get update && sudo apt-get install -y --no-install-recommends ${packages.join(' ')}`;
}

/** `apt-get update`, then `apt-get install` of `packages`; the install's exit status (or the update's if it failed). */
export function aptInstall(
  packages: readonly string[],
  how: 'root' | 'sudo',
  run: RunCommand = runCommand,
): number | null {
  // sudo may drop DEBIAN_FRONTEND from the environment; `env` sets it inside the privileged command.
  const prefix = how === 'sudo' ? ['sudo', '-n', 'env'] : ['env'];
  const apt = (args: string[], timeoutMs: number): number | null => {
    const [command, ...rest] = [...prefix, 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args];
    return run(command as string, rest, timeoutMs);
  };
  const updated = apt(['update', '-qq'], UPDATE_TIMEOUT_MS);
  if (updated !== 0) return updated;
  return apt(['install', '-y', '-qq', '--no-install-recommends', ...packages], INSTALL_TIMEOUT_MS);
}
