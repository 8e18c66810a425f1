/**
 * Runs the CLI from source (`node --import tsx src/cli/run.ts …`), so tests need no build.
 * The installed entry point is bin/switchyard.js, which runs the compiled dist/cli/main.js.
 */
import { main } from './main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`switchyard: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
