#!/usr/bin/env node
// Bundles the operator console (src/console/, Preact + uPlot) into dist/console/ with esbuild: app.js (one
// minified ES module), app.css (the console's and uPlot's styles) and index.html, which the API listener
// serves at /console/ (src/api/console-assets.ts). Run by scripts/build.mjs after tsc; on its own:
// `node scripts/build-console.mjs`. No source maps (nothing to fetch from elsewhere, and smaller).
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'console');

export async function buildConsole() {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  await build({
    entryPoints: { app: join(root, 'src', 'console', 'main.tsx') },
    outdir: out,
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2020'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning',
  });
  copyFileSync(join(root, 'src', 'console', 'index.html'), join(out, 'index.html'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildConsole().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
