/**
 * The Debian tools the benchmark drives: nginx with its echo module (upstream and reference proxy) and
 * wrk (load).
 * When one is missing and this process may run apt-get (root, or sudo without a password:
 * scripts/apt.ts), `apt-get update` and `apt-get install nginx-light wrk` run. Otherwise nothing is
 * installed and the caller is told exactly which command to run; `--quick` then skips the legs that
 * need the tool instead of failing. `npm test` installs both before any test (scripts/ensure-system.ts).
 */
import { existsSync } from 'node:fs';
import { aptAccess, aptInstall, installCommand, onPath } from '../scripts/apt.js';
import { ECHO_MODULE } from './nginx.js';

export interface Tools {
  nginx?: string;
  wrk?: string;
  /** Why a tool is absent, for the report; empty when both were found. */
  problems: string[];
}

const APT_PACKAGES = ['nginx-light', 'wrk'];
export const INSTALL_HINT = `with ${installCommand(APT_PACKAGES)}`;

/** Where nginx (with the echo module) and wrk are, without installing anything. */
export function findTools(): Tools {
  let nginx = onPath('nginx');
  const wrk = onPath('wrk');
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
  const found = findTools();
  if (found.problems.length === 0) return found;
  const access = options.install ? aptAccess() : { how: 'none' as const, why: '--no-install given' };
  if (access.how === 'none') {
    options.log(`bench: ${found.problems.join(', ')} (${access.why}); install them ${INSTALL_HINT}`);
    return found;
  }
  options.log(`bench: ${found.problems.join(', ')}; installing ${APT_PACKAGES.join(' ')} with apt-get`);
  const status = aptInstall(APT_PACKAGES, access.how);
  const after = findTools();
  if (status !== 0) after.problems.push(`apt-get failed (exit ${status}); install them ${INSTALL_HINT}`);
  return after;
}
