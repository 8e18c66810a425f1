/**
 * `npm run bench [-- --quick …]`: the benchmark of SPEC §7. See docs/benchmarks.md and bench/harness.ts.
 * Exit codes: 0 all legs ran (or were skipped in --quick), 1 a leg failed, 2 bad options / missing tools
 * or an unreadable results file. `--history [DIR]` and `--compare A.json B.json` print and run nothing;
 * `--compare A.json` alone prints the comparison after the run (compare.ts). Interrupted by SIGINT or
 * SIGTERM, it ends every process it started and exits 130 / 143.
 */
import { Child } from './child.js';
import { compareReports, historyTable, lastFullRuns, readReport } from './compare.js';
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
  try {
    if (options.history !== undefined) {
      const runs = lastFullRuns(options.history);
      if (runs.length === 0) throw new Error(`no full-mode results in ${options.history}`);
      process.stdout.write(historyTable(runs));
      return 0;
    }
    const before = options.compare === undefined ? undefined : readReport(options.compare.before);
    if (before !== undefined && options.compare?.after !== undefined) {
      process.stdout.write(`${compareReports(before, readReport(options.compare.after)).join('\n')}\n`);
      return 0;
    }
    const outcome = await runBench(options, log);
    process.stdout.write(`${summaryLines(outcome.report).join('\n')}\n`);
    process.stdout.write(`results: ${outcome.jsonFile}\n         ${outcome.markdownFile}\n`);
    if (before !== undefined) {
      process.stdout.write(
        `\nagainst ${options.compare?.before}:\n${compareReports(before, outcome.report).join('\n')}\n`,
      );
    }
    return outcome.failed ? 1 : 0;
  } catch (err) {
    log(`bench: ${(err as Error).message}`);
    return 2;
  }
}

// Interrupted (Ctrl-C, or a SIGTERM from whoever started the run): end nginx, Switchyard and the rest by
// their PIDs before exiting, rather than leaving them running with nobody to stop them. wrk ends by itself.
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => {
    log(`bench: ${signal}: stopping the processes this run started`);
    Child.endAllNow();
    process.exit(code);
  });
}

main().then((code) => {
  process.exitCode = code;
});
