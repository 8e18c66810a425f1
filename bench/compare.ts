/**
 * The regression guard of issue 18, over results files (`<out>/<date>.json`, schema switchyard-bench/1):
 *
 * - `compareReports(before, after)`: each leg (matched by id) with req/s, p50 and p99 latency, CPU µs per
 *   request, × nginx — and for the management leg listing p50 and monitoring CPU — as
 *   `before → after (change %)`, then each target's value before → after and whether it met the newer
 *   run's goal (so a target whose goal was raised is judged the same on both sides). A leg or
 *   target in only one of the two shows `–` on the other side. Printed after a run with
 *   `--compare BEFORE.json`, or for two files with `--compare BEFORE.json AFTER.json` (no run).
 * - `historyTable(reports)`: the Markdown table docs/benchmarks.md keeps — one row per target and per
 *   Switchyard leg's req/s, one column per run (oldest first) and the median of the runs that have the
 *   value. `lastFullRuns(dir)` picks the runs: the newest five `mode: "full"` reports directly in `dir`
 *   (sub-folders such as `issue-15/` are not read), by `started_at`.
 * Nothing here asserts: figures are reported, as everywhere in the bench.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { corePercent } from './format.js';
import type { LegResult } from './legs.js';
import type { BenchReport, TargetCheck } from './report.js';
import { targetLabel } from './report.js';

/** One figure of a leg, as compared and tabled. */
interface Metric {
  name: string;
  digits: number;
  value(leg: LegResult): number | undefined;
}

const LEG_METRICS: Metric[] = [
  { name: 'req/s', digits: 0, value: (leg) => leg.rps },
  { name: 'p50 ms', digits: 3, value: (leg) => leg.latency_ms?.p50 },
  { name: 'p99 ms', digits: 3, value: (leg) => leg.latency_ms?.p99 },
  { name: 'CPU µs/req', digits: 1, value: (leg) => leg.cpu_us_per_request },
  { name: '× nginx', digits: 2, value: (leg) => leg.ratio_to_nginx },
  {
    name: 'monitoring % of a core',
    digits: 1,
    value: (leg) => (leg.mgmt === undefined ? undefined : corePercent(leg.mgmt.monitoring.cpu_share_of_core)),
  },
  { name: 'checks/s', digits: 1, value: (leg) => leg.mgmt?.monitoring.checks_per_s },
];

/** `digits` decimals; a negative count means at most that many (targets' values: 0.5, 12.25, 24.7). */
const fmt = (n: number | undefined, digits: number): string =>
  n === undefined
    ? '–'
    : n.toLocaleString('en-US', {
        maximumFractionDigits: Math.abs(digits),
        minimumFractionDigits: Math.max(digits, 0),
      });

/** `+4.2 %` from before to after; empty when either is missing or before is 0. */
export function change(before: number | undefined, after: number | undefined): string {
  if (before === undefined || after === undefined || before === 0) return '';
  const pct = ((after - before) / Math.abs(before)) * 100;
  const rounded = Math.round(pct * 10) / 10;
  return `${rounded > 0 ? '+' : rounded === 0 ? '±' : '−'}${Math.abs(rounded).toFixed(1)} %`;
}

function pair(before: number | undefined, after: number | undefined, digits: number): string {
  if (before === undefined && after === undefined) return '–';
  const delta = change(before, after);
  return `${fmt(before, digits)} → ${fmt(after, digits)}${delta === '' ? '' : ` (${delta})`}`;
}

const okLegs = (report: BenchReport): LegResult[] => report.legs.filter((leg) => leg.status === 'ok');

/**
 * Whether `value` meets `goal` ("≥ 0.6", "≤ 20", "< 25", "> 1"); undefined when the goal is not of that form.
 * Both runs are judged by the newer run's goal: goals change (issue 18 raised SPEC §12's).
 */
export function meets(goal: string, value: number): boolean | undefined {
  const match = /^(≥|≤|<|>)\s*(-?[\d.]+)$/.exec(goal.trim());
  if (match === null) return undefined;
  const bound = Number(match[2]);
  if (!Number.isFinite(bound)) return undefined;
  return match[1] === '≥'
    ? value >= bound
    : match[1] === '≤'
      ? value <= bound
      : match[1] === '<'
        ? value < bound
        : value > bound;
}

function met(t: TargetCheck | undefined, goal: string): string {
  if (t === undefined || t.value === undefined) return 'not measured';
  const judged = meets(goal, t.value) ?? t.met;
  return judged === undefined ? 'not measured' : judged ? 'met' : 'missed';
}

/** The comparison as Markdown lines: a header, the legs' table, the targets' table. */
export function compareReports(before: BenchReport, after: BenchReport): string[] {
  const out = [
    `Before: ${before.started_at} (${before.mode}); after: ${after.started_at} (${after.mode}).`,
    ...(before.mode === after.mode ? [] : ['The two runs are of different modes: their figures are not comparable.']),
    '',
  ];
  const beforeLegs = new Map(okLegs(before).map((leg) => [leg.id, leg]));
  const afterLegs = new Map(okLegs(after).map((leg) => [leg.id, leg]));
  const ids = [...new Set([...afterLegs.keys(), ...beforeLegs.keys()])];
  const used = LEG_METRICS.filter((m) =>
    ids.some((id) => {
      const a = afterLegs.get(id);
      const b = beforeLegs.get(id);
      return (a !== undefined && m.value(a) !== undefined) || (b !== undefined && m.value(b) !== undefined);
    }),
  );
  out.push(`| leg | ${used.map((m) => m.name).join(' | ')} |`, `|---|${used.map(() => '--:').join('|')}|`);
  for (const id of ids) {
    const a = afterLegs.get(id);
    const b = beforeLegs.get(id);
    const leg = (a ?? b) as LegResult;
    const cells = used.map((m) =>
      pair(b === undefined ? undefined : m.value(b), a === undefined ? undefined : m.value(a), m.digits),
    );
    out.push(`| ${leg.title} · ${targetLabel(leg)} | ${cells.join(' | ')} |`);
  }
  const skipped = [...new Set([...before.legs, ...after.legs].filter((l) => l.status !== 'ok').map((l) => l.id))];
  if (skipped.length > 0)
    out.push('', `Not ok in one run or both (left out above where neither has figures): ${skipped.join(', ')}.`);

  out.push('', '| target | goal | before → after | met |', '|---|---|--:|---|');
  const beforeTargets = new Map(before.targets.map((t) => [t.name, t]));
  const afterTargets = new Map(after.targets.map((t) => [t.name, t]));
  for (const name of [...new Set([...afterTargets.keys(), ...beforeTargets.keys()])]) {
    const a = afterTargets.get(name);
    const b = beforeTargets.get(name);
    const t = (a ?? b) as TargetCheck; // the newer run's goal and unit when it has the target
    out.push(
      `| ${name} | ${t.goal} ${t.unit} | ${pair(b?.value, a?.value, -3)} | ${met(b, t.goal)} → ${met(a, t.goal)} |`,
    );
  }
  return out;
}

/** Median of the values present (mean of the middle two for an even count); undefined for none. */
export function median(values: ReadonlyArray<number | undefined>): number | undefined {
  const present = values.filter((v): v is number => v !== undefined).sort((x, y) => x - y);
  if (present.length === 0) return undefined;
  const mid = Math.floor(present.length / 2);
  return present.length % 2 === 1
    ? (present[mid] as number)
    : ((present[mid - 1] as number) + (present[mid] as number)) / 2;
}

/** `2026-11-22T03-05-59Z` style column titles: the run's start, to the minute. */
const runTitle = (report: BenchReport): string => report.started_at.slice(0, 16).replace('T', ' ');

/** The Markdown table of `reports` (oldest first): targets, then each Switchyard leg's req/s. */
export function historyTable(reports: readonly BenchReport[]): string {
  const header = `| measure | ${reports.map(runTitle).join(' | ')} | median |`;
  const rule = `|---|${reports.map(() => '--:').join('|')}|--:|`;
  const rows: string[] = [];
  const targetNames = [...new Set(reports.flatMap((r) => r.targets.map((t) => t.name)))];
  for (const name of targetNames) {
    const found = reports.map((r) => r.targets.find((t) => t.name === name));
    // The newest run's goal and unit (goals change, e.g. when issue 18 set SPEC §12's).
    const first = [...found].reverse().find((t) => t !== undefined) as TargetCheck;
    const values = found.map((t) => t?.value);
    if (values.every((v) => v === undefined)) continue;
    const m = median(values);
    rows.push(
      `| ${name} (${first.goal} ${first.unit}) | ${values.map((v) => fmt(v, -3)).join(' | ')} | **${fmt(m, -3)}** |`,
    );
  }
  const legIds = [
    ...new Set(
      reports.flatMap((r) =>
        okLegs(r)
          .filter((l) => l.target === 'switchyard' && l.rps !== undefined)
          .map((l) => l.id),
      ),
    ),
  ];
  for (const id of legIds) {
    const legs = reports.map((r) => okLegs(r).find((l) => l.id === id));
    const first = legs.find((l) => l !== undefined) as LegResult;
    const values = legs.map((l) => l?.rps);
    rows.push(
      `| ${first.title} · ${targetLabel(first)}, req/s | ${values.map((v) => fmt(v, 0)).join(' | ')} | **${fmt(median(values), 0)}** |`,
    );
  }
  return `${[header, rule, ...rows].join('\n')}\n`;
}

/** Reads one results file; throws naming the file when it is not a bench report. */
export function readReport(file: string): BenchReport {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as BenchReport;
  if (parsed.schema !== 'switchyard-bench/1')
    throw new Error(`${file} is not a bench results file (schema ${String(parsed.schema)})`);
  return parsed;
}

/** The newest `count` full-mode reports directly in `dir`, oldest first. */
export function lastFullRuns(dir: string, count = 5): BenchReport[] {
  const reports: BenchReport[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.json')) continue;
    try {
      const report = readReport(join(dir, name));
      if (report.mode === 'full') reports.push(report);
    } catch {
      // Not a results file (or unreadable): not part of the history.
    }
  }
  reports.sort((a, b) => a.started_at.localeCompare(b.started_at));
  return reports.slice(-count);
}
