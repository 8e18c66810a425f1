#!/usr/bin/env node
// Compiles src/ to dist/ (tsc -p tsconfig.build.json), bundles the console (scripts/build-console.mjs,
// esbuild: src/console/ → dist/console/) and records what it compiled, so that a second build
// of the same sources can be skipped.
// Usage: node scripts/build.mjs               always build (`npm run build`)
//        node scripts/build.mjs --if-changed  build only when the inputs differ from the last build (`prepare`)
//
// A production install (`npm ci --omit=dev`, as deploy/Dockerfile's runtime stage runs over the dist/ its
// build stage made) has no TypeScript and maybe no src/: there `--if-changed` keeps the dist/ it finds,
// and fails, saying why, when there is none.
//
// Why `prepare` must be able to skip: `npx switchyard serve` in this checkout (npm 11) finds the bin
// `switchyard` in the project's own package.json, so npm exec installs the project into its npx cache
// (~/.npm/_npx/<hash>/node_modules/switchyard-gateway, a link back here) instead of running it in place, and
// installing a linked directory runs its `prepare` script. With `prepare: npm run build` the first npx after
// `npm install` therefore recompiled everything (10–25 s, output hidden); later runs reuse the cache entry.
//
// Inputs: every file under src/ except *.test.ts, tsconfig.json, tsconfig.build.json and the TypeScript
// version. Their SHA-256 is written to dist/.build-inputs after a successful build (removed first, so an
// interrupted or failed build is never taken as current). dist/ counts as current when that digest equals
// the inputs' digest and dist/cli/main.js exists.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.build-inputs');
const require = createRequire(import.meta.url);

function sourceFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (!entry.name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

/** SHA-256 over the inputs (paths and contents, in a fixed order) and the compiler version. */
function inputsDigest() {
  const hash = createHash('sha256');
  const typescript = JSON.parse(readFileSync(require.resolve('typescript/package.json'), 'utf8'));
  hash.update(`typescript ${typescript.version}\n`);
  const files = [...sourceFiles(join(root, 'src')), join(root, 'tsconfig.json'), join(root, 'tsconfig.build.json')]
    .map((path) => relative(root, path).split('\\').join('/'))
    .sort();
  for (const file of files) {
    const content = readFileSync(join(root, file));
    hash.update(`${file}\n${content.length}\n`);
    hash.update(content);
  }
  return hash.digest('hex');
}

function current(digest) {
  return (
    existsSync(join(root, 'dist', 'cli', 'main.js')) &&
    existsSync(join(root, 'dist', 'console', 'app.js')) &&
    existsSync(stamp) &&
    readFileSync(stamp, 'utf8').trim() === digest
  );
}

/** Whether TypeScript is installed (it is a dev dependency). */
function hasCompiler() {
  try {
    require.resolve('typescript/package.json');
    return true;
  } catch {
    return false;
  }
}

function main(args) {
  const ifChanged = args.includes('--if-changed');
  if (ifChanged && !hasCompiler()) {
    if (existsSync(join(root, 'dist', 'cli', 'main.js'))) {
      process.stderr.write('TypeScript is not installed (a production install): keeping the dist/ that is there\n');
      return 0;
    }
    process.stderr.write('dist/ is missing and TypeScript is not installed: run npm install, then npm run build\n');
    return 1;
  }
  const digest = inputsDigest();
  if (ifChanged && current(digest)) {
    process.stderr.write(
      'dist/ is current (src/ unchanged since the last build): nothing to compile; `npm run build` forces it\n',
    );
    return 0;
  }
  rmSync(stamp, { force: true });
  const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (tsc.status !== 0) return tsc.status ?? 1;
  // The operator console's browser bundle (esbuild): dist/console/.
  const bundle = spawnSync(process.execPath, [join(root, 'scripts', 'build-console.mjs')], {
    cwd: root,
    stdio: 'inherit',
  });
  if (bundle.status !== 0) return bundle.status ?? 1;
  // The digest of the inputs as they were when the compile started: an edit during it makes the next check differ.
  writeFileSync(stamp, `${digest}\n`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
