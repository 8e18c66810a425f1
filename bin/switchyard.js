#!/usr/bin/env node
// Entry point of the `switchyard` CLI: runs the compiled code (`npm run build`, done by `npm ci` via `prepare`).
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`switchyard: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
