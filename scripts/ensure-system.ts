/**
 * The first step of `npm test`: the system parts the suite needs besides Node.js and npm, found where
 * the tests look for them, and installed when missing.
 *
 *   postgresql-15  initdb and pg_ctl in SWITCHYARD_PG_BIN (default /usr/lib/postgresql/15/bin)
 *   redis-server   SWITCHYARD_REDIS_SERVER (default /usr/bin/redis-server)
 *   chromium       /usr/bin/chromium
 *   nginx-light    nginx with its echo module, and wrk: as the benchmark finds them (bench/tools.ts)
 *   wrk
 *
 * All present: nothing is run and nothing printed (a few file checks, well under a second). Some
 * missing: they are installed with apt-get when this process may (root, or sudo without a password;
 * scripts/apt.ts), then looked for again. Otherwise — or when they are still missing after apt-get —
 * one message names the packages, what each is for and the command that installs them, and the exit
 * status is 1, so `npm test` stops before building or running anything.
 *
 * Usage: node --import tsx scripts/ensure-system.ts
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { findTools } from '../bench/tools.js';
import { postgresAvailable } from '../test/helpers/postgres.js';
import { BINARY as REDIS_SERVER } from '../test/helpers/redis.js';
import { type AptAccess, aptAccess, aptInstall, installCommand } from './apt.js';

/** A Debian package the suite needs, and how to tell it is there. */
export interface Requirement {
  readonly package: string;
  readonly neededFor: string;
  present(): boolean;
}

/** The browser the console tests drive (test/console/console.test.ts). */
const CHROMIUM = '/usr/bin/chromium';

export const REQUIREMENTS: readonly Requirement[] = [
  { package: 'postgresql-15', neededFor: 'the PostgreSQL test pass', present: postgresAvailable },
  { package: 'redis-server', neededFor: 'the Redis tests (shared limits)', present: () => existsSync(REDIS_SERVER) },
  { package: 'chromium', neededFor: 'the console tests (headless)', present: () => existsSync(CHROMIUM) },
  {
    package: 'nginx-light',
    neededFor: "the benchmark's quick test (nginx with its echo module)",
    present: () => findTools().nginx !== undefined,
  },
  { package: 'wrk', neededFor: "the benchmark's quick test (load)", present: () => findTools().wrk !== undefined },
];

export type SystemPlan =
  | { kind: 'ready' }
  | { kind: 'install'; packages: string[]; how: 'root' | 'sudo' }
  | { kind: 'stop'; message: string };

/** What to do about the `missing` requirements, given how apt-get may be run. */
export function planSystem(missing: readonly Requirement[], access: () => AptAccess): SystemPlan {
  if (missing.length === 0) return { kind: 'ready' };
  const found = access();
  if (found.how === 'none') return { kind: 'stop', message: missingMessage(missing, found.why) };
  return { kind: 'install', packages: missing.map((requirement) => requirement.package), how: found.how };
}

/** The one message of a stop: what is missing, for what, why it was not installed, and the command. */
export function missingMessage(missing: readonly Requirement[], why: string): string {
  const width = Math.max(...missing.map((requirement) => requirement.package.length));
  return [
    `npm test needs system packages that are missing (${why}):`,
    ...missing.map((requirement) => `  ${requirement.package.padEnd(width)}  for ${requirement.neededFor}`),
    'Install them, then run npm test again:',
    `  ${installCommand(missing.map((requirement) => requirement.package))}`,
  ].join('\n');
}

export interface EnsureDeps {
  requirements: readonly Requirement[];
  access: () => AptAccess;
  install: (packages: readonly string[], how: 'root' | 'sudo') => number | null;
  log: (text: string) => void;
}

/** Checks, installs when it may, checks again; the exit status for `npm test` (0 = go on). */
export function ensureSystem(deps: EnsureDeps): number {
  const missingNow = (): Requirement[] => deps.requirements.filter((requirement) => !requirement.present());
  const plan = planSystem(missingNow(), deps.access);
  if (plan.kind === 'ready') return 0;
  if (plan.kind === 'stop') {
    deps.log(plan.message);
    return 1;
  }
  deps.log(
    `npm test: installing ${plan.packages.join(' ')} with apt-get${plan.how === 'sudo' ? ' (through sudo)' : ''}`,
  );
  const status = deps.install(plan.packages, plan.how);
  const left = missingNow();
  if (left.length === 0) return 0;
  deps.log(missingMessage(left, `apt-get ${status === 0 ? 'did not install them' : `exited with status ${status}`}`));
  return 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = ensureSystem({
    requirements: REQUIREMENTS,
    access: () => aptAccess(),
    install: (packages, how) => aptInstall(packages, how),
    log: (text) => process.stderr.write(`${text}\n`),
  });
}
