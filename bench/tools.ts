/**
 * The Debian tools the benchmark drives: nginx with its echo module (upstream and reference proxy) and
 * wrk (load).
 * When one is missing and we are root (CI, the dev machines), `apt-get update` runs once and then
 * `apt-get install -y nginx-light wrk`. Otherwise nothing is installed and the caller is told exactly
 * which command to run; `--quick` then skips the legs that need the tool instead of failing.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ECHO_MODULE } from './nginx.js';

export interface Tools {
  nginx?: string;
  wrk?: string;
  /** Why a tool is absent, for the report; empty when both were found. */
  problems: string[];
}

const APT_PACKAGES = ['nginx-light', 'wrk'];
export const INSTALL_HINT = `as root: apt-get update && apt-get install -y ${APT_PACKAGES.join(' ')}`;

function which(name: string): string | undefined {
  // nginx lives in /usr/sbin, which a non-root PATH often lacks.
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin'];
  for (const dir of dirs) {
    if (dir === '') continue;
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

function find(): Tools {
  let nginx = which('nginx');
  const wrk = which('wrk');
  const problems: string[] = [];
  if (nginx === undefined) problems.push('nginx not found');
  else if (!existsSync(ECHO_MODULE)) {
    // The upstream echoes request ids with this module; nginx-light depends on it, plain nginx does not.
    problems.push(`nginx echo module missing (${ECHO_MODULE}, package libnginx-mod-http-echo)`);
    nginx = undefined;
  }
  if (wrk === undefined) problems.push('wrk not found');
  return { ...(nginx === undefined ? {} : { nginx }), ...(wrk === undefined ? {} : { wrk }), problems };
}

/** Finds nginx and wrk, installing them with apt-get when allowed and possible. */
export function ensureTools(options: { install: boolean; log: (line: string) => void }): Tools {
  const found = find();
  if (found.problems.length === 0) return found;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!options.install || !isRoot || which('apt-get') === undefined) {
    const why = !options.install ? '--no-install given' : !isRoot ? 'not root' : 'apt-get not available';
    options.log(`bench: ${found.problems.join(', ')} (${why}); install them ${INSTALL_HINT}`);
    return found;
  }
  options.log(`bench: ${found.problems.join(', ')}; installing ${APT_PACKAGES.join(' ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Bounded: apt-get gets ten minutes in total; a hung mirror must not hang the benchmark forever.
  const update = spawnSync('apt-get', ['update'], { stdio: 'inherit', env, timeout: 300_000 });
  const install =
    update.status === 0
      ? spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...APT_PACKAGES], {
          stdio: 'inherit',
          env,
          timeout: 300_000,
        })
      : update;
  const after = find();
  if (install.status !== 0) after.problems.push(`apt-get failed (exit ${install.status}); try ${INSTALL_HINT}`);
  return after;
}
