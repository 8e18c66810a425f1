#!/usr/bin/env node
// Entry point of the `switchyard` CLI: runs the compiled code (`npm run build`, done by `npm ci` via `prepare`).
// Node's ES module loader opens every file of a module graph it has discovered at once, and kysely's index
// alone imports about 200 files: loaded first, on its own, its files and ours are never open together, so
// `serve` starts within a 300-descriptor limit (test/gateway/fd-reserve.test.ts).
await import('kysely');
const { main } = await import('../dist/cli/main.js');

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`switchyard: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
