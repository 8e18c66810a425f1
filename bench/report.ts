/**
 * Turns leg results into the report: ratios to nginx and to direct (same scenario, same run; the cached
 * leg compares with plain single-read forwarding), the SPEC §7 targets (reported, never asserted), and
 * the Markdown table written next to the JSON.
 */
import type { LegResult, Scenario } from './legs.js';

export interface TargetCheck {
  name: string;
  /** The measured value in `unit`; absent when a needed leg did not run. */
  value?: number;
  unit: string;
  goal: string;
  met?: boolean;
}

export interface BenchReport {
  schema: 'switchyard-bench/1';
  started_at: string;
  finished_at: string;
  mode: 'quick' | 'full';
  machine: Record<string, unknown>;
  settings: Record<string, unknown>;
  notes: string[];
  legs: LegResult[];
  targets: TargetCheck[];
}

/** Which scenario's legs a scenario is compared with. */
const BASELINE: Partial<Record<Scenario, Scenario>> = { cached: 'single' };

function find(legs: LegResult[], scenario: Scenario, target: LegResult['target']): LegResult | undefined {
  return legs.find((leg) => leg.scenario === scenario && leg.target === target && leg.status === 'ok');
}

export function addRatios(legs: LegResult[]): LegResult[] {
  return legs.map((leg) => {
    if (leg.status !== 'ok' || leg.rps === undefined) return leg;
    const scenario = BASELINE[leg.scenario] ?? leg.scenario;
    const nginx = find(legs, scenario, 'nginx');
    const direct = find(legs, scenario, 'direct');
    return {
      ...leg,
      ...(nginx?.rps ? { ratio_to_nginx: Math.round((leg.rps / nginx.rps) * 1000) / 1000 } : {}),
      ...(direct?.rps ? { ratio_to_direct: Math.round((leg.rps / direct.rps) * 1000) / 1000 } : {}),
    };
  });
}

export function checkTargets(legs: LegResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const ratio = (name: string, leg: LegResult | undefined, base: LegResult | undefined, min: number): void => {
    const value = leg?.rps && base?.rps ? Math.round((leg.rps / base.rps) * 1000) / 1000 : undefined;
    checks.push({
      name,
      unit: '× req/s',
      goal: `≥ ${min}`,
      ...(value === undefined ? {} : { value, met: value >= min }),
    });
  };
  ratio('forwarding vs nginx proxy', find(legs, 'single', 'switchyard'), find(legs, 'single', 'nginx'), 0.5);
  ratio('cached vs nginx proxy forwarding', find(legs, 'cached', 'switchyard'), find(legs, 'single', 'nginx'), 1);

  // A Node process's RSS breathes under any load (V8 grows its young generation, buffers wait for GC):
  // the light leg (same process, same single connection, tiny answers) shows how much. What the 10 MiB
  // body itself costs is the growth beyond that.
  const large = find(legs, 'large10mb', 'switchyard');
  const lightGrowth = find(legs, 'light', 'switchyard')?.rss_growth_bytes ?? 0;
  const growth =
    large?.rss_growth_bytes !== undefined && large.peak_is_per_leg
      ? Math.round((Math.max(0, large.rss_growth_bytes - lightGrowth) / large.response_bytes) * 100) / 100
      : undefined;
  checks.push({
    name: '10 MiB pass-through RSS growth',
    unit: '× body size (beyond the light-load leg)',
    goal: '< 2',
    ...(growth === undefined ? {} : { value: growth, met: growth < 2 }),
  });

  const light = find(legs, 'light', 'switchyard');
  const lightDirect = find(legs, 'light', 'direct');
  const added =
    light?.latency_ms && lightDirect?.latency_ms
      ? Math.round((light.latency_ms.p50 - lightDirect.latency_ms.p50) * 1000) / 1000
      : undefined;
  checks.push({
    name: 'p50 added latency at light load',
    unit: 'ms over direct',
    goal: '≤ 0.2',
    ...(added === undefined ? {} : { value: added, met: added <= 0.2 }),
  });
  return checks;
}

const fmt = (n: number | undefined, digits = 0): string =>
  n === undefined ? '–' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mib = (bytes: number | undefined): string => (bytes === undefined ? '–' : `${fmt(bytes / 1_048_576, 1)}`);

export function markdown(report: BenchReport): string {
  const lines = [
    `# Switchyard benchmark — ${report.started_at}`,
    '',
    `Mode: ${report.mode}; ${report.settings.seconds} s per leg; ${report.settings.connections} connections ` +
      `(light: 1, 10 MiB: ${report.settings.large_connections}); wrk threads: ${report.settings.threads}; ` +
      `machine: ${report.machine.cpus} × ${report.machine.cpu_model}, node ${report.machine.node}, ` +
      `load average at start ${report.machine.load_average}.`,
    '',
    '| leg | target | conns | req/s | × nginx | × direct | p50 ms | p99 ms | CPU µs/req | peak RSS MiB | RSS growth MiB | status |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|',
  ];
  for (const leg of report.legs) {
    const status =
      leg.status === 'ok' ? 'ok' : `${leg.status}: ${(leg.reason ?? '').replaceAll('|', '\\|').slice(0, 120)}`;
    lines.push(
      `| ${leg.title} | ${leg.target} | ${leg.connections} | ${fmt(leg.rps)} | ${fmt(leg.ratio_to_nginx, 2)} | ` +
        `${fmt(leg.ratio_to_direct, 2)} | ${fmt(leg.latency_ms?.p50, 3)} | ${fmt(leg.latency_ms?.p99, 3)} | ` +
        `${fmt(leg.cpu_us_per_request, 1)} | ${mib(leg.peak_rss_bytes)} | ${mib(leg.rss_growth_bytes)} | ${status} |`,
    );
  }
  lines.push('', '| target | measured | goal | met |', '|---|--:|---|---|');
  for (const t of report.targets) {
    lines.push(
      `| ${t.name} | ${t.value === undefined ? '–' : `${t.value} ${t.unit}`} | ${t.goal} ${t.unit} | ${
        t.met === undefined ? 'not measured' : t.met ? 'yes' : 'no'
      } |`,
    );
  }
  lines.push(
    '',
    'CPU µs/req and RSS are those of the server under test: the proxy (nginx or Switchyard), or for ' +
      "`direct` the upstream nginx itself. RSS growth is the leg's peak (VmHWM, reset before the leg) " +
      'minus the RSS before it. Ratios compare req/s with the same scenario in the same run ' +
      '(the cached leg with plain forwarding). ' +
      `Switchyard ran ${String(report.settings.switchyard_runtime ?? 'from the sources')}.`,
  );
  const unsettled = report.legs.filter((leg) => (leg.settled_ms ?? 0) > 0);
  if (unsettled.length > 0) {
    lines.push(
      '',
      `Before ${unsettled.map((l) => `${l.id} (${l.settled_ms} ms)`).join(', ')} the target answered wrongly for a ` +
        'while after the previous load stopped (wrk hangs up with requests in flight); the harness waited until it answered correctly.',
    );
  }
  if (report.notes.length > 0) lines.push('', ...report.notes.map((n) => `- ${n}`));
  return `${lines.join('\n')}\n`;
}

/** The lines printed at the end of a run: each Switchyard leg's ratios, then the targets. */
export function summaryLines(report: BenchReport): string[] {
  const out: string[] = [];
  for (const leg of report.legs) {
    if (leg.target !== 'switchyard') continue;
    if (leg.status !== 'ok') {
      out.push(`${leg.title}: ${leg.status}${leg.reason ? ` (${leg.reason})` : ''}`);
      continue;
    }
    out.push(
      `${leg.title}: ${fmt(leg.rps)} req/s = ${fmt(leg.ratio_to_nginx, 2)}× nginx, ${fmt(leg.ratio_to_direct, 2)}× direct; ` +
        `p50 ${fmt(leg.latency_ms?.p50, 3)} ms`,
    );
  }
  for (const t of report.targets) {
    const value = t.value === undefined ? 'not measured' : `${t.value} ${t.unit}`;
    out.push(`target ${t.name}: ${value} (goal ${t.goal}) ${t.met === undefined ? '' : t.met ? 'MET' : 'MISSED'}`);
  }
  return out;
}
