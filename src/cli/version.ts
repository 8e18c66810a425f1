/**
 * `switchyard --version`: the package's version, read from its package.json at run time (the package
 * may be renamed or re-versioned without touching this file), and, when the package is a git checkout,
 * its commit: `switchyard 0.1.0 (commit 1a2b3c4d5e6f)`. An install without git (an npm package, an
 * image built without `.git`, a machine without the git command) prints the version alone.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The package root: two levels above this file, in src/cli/ as in dist/cli/. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function versionLine(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  const commit = checkoutCommit();
  return `switchyard ${pkg.version ?? 'unknown'}${commit === undefined ? '' : ` (commit ${commit})`}`;
}

/** The commit of the checkout the package runs from; undefined when it is no checkout or git is missing. */
function checkoutCommit(): string | undefined {
  // Only the package's own .git: a package installed inside another project's repository has none.
  if (!existsSync(`${ROOT}.git`)) return undefined;
  const git = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, encoding: 'utf8', timeout: 5000 });
  const commit = git.status === 0 ? git.stdout.trim() : '';
  return /^[0-9a-f]{7,40}$/.test(commit) ? commit : undefined;
}
