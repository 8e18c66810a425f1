/**
 * Which build is running: the package's version, read from its package.json at run time (the package
 * may be renamed or re-versioned without touching this file), and, when the package is a git checkout,
 * its commit (12 hex digits). An install without git (an npm package, an image built without `.git`, a
 * machine without the git command) has no commit. `switchyard --version` prints it (cli/version.ts);
 * `/metrics` exports it as `switchyard_build_info{version,commit,node} 1` (commit "unknown" without one).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MetricsRegistry } from './registry.js';

/**
 * The package root: the nearest folder above this file with a package.json — two levels up in src/metrics/
 * and dist/metrics/, three in the benchmark's own build (.tmp/bench-dist-PID/metrics/).
 */
const ROOT = packageRoot(fileURLToPath(import.meta.url));

function packageRoot(file: string): string {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
  }
  return dirname(file);
}

export interface BuildIdentity {
  readonly version: string;
  /** The checkout's commit; undefined when the package is no checkout or git is missing. */
  readonly commit: string | undefined;
}

let identity: BuildIdentity | undefined;

/** Read once per process (a git call): the version and commit do not change while it runs. */
export function buildIdentity(): BuildIdentity {
  identity ??= {
    version:
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown',
    commit: checkoutCommit(),
  };
  return identity;
}

/** `switchyard_build_info{version,commit,node} 1`: register it in one process of an instance only. */
export function registerBuildInfo(metrics: MetricsRegistry): void {
  const { version, commit } = buildIdentity();
  metrics
    .gauge('switchyard_build_info', 'The running build: package version, git commit and Node.js version (always 1)', [
      'version',
      'commit',
      'node',
    ])
    .set({ version, commit: commit ?? 'unknown', node: process.versions.node }, 1);
}

function checkoutCommit(): string | undefined {
  // Only the package's own .git: a package installed inside another project's repository has none.
  if (!existsSync(join(ROOT, '.git'))) return undefined;
  const git = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, encoding: 'utf8', timeout: 5000 });
  const commit = git.status === 0 ? git.stdout.trim() : '';
  return /^[0-9a-f]{7,40}$/.test(commit) ? commit : undefined;
}
