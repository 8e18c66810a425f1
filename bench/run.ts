/**
 * `npm run bench [-- --quick …]`: the benchmark of SPEC §7. See docs/benchmarks.md and bench/harness.ts.
 * Exit codes: 0 all legs ran (or were skipped in --quick), 1 a leg failed, 2 bad options / missing tools.
 */
import { runBench } from './harness.js';
import { parseOptions } from './options.js';
import { summaryLines } from './report.js';

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

async function main(): Promise<number> {
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (err) {
    log((err as Error).message);
    return 2;
  }
  let outcome: Awaited<ReturnType<typeof runBench>>;
  try {
    outcome = await runBench(options, log);
  } catch (err) {
    log(`bench: ${(err as Error).message}`);
    return 2;
  }
  process.stdout.write(`${summaryLines(outcome.report).join('\n')}\n`);
  process.stdout.write(`results: ${outcome.jsonFile}\n         ${outcome.markdownFile}\n`);
  return outcome.failed ? 1 : 0;
}

main().then((code) => {
  process.exitCode = code;
});
