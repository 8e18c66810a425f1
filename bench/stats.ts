/** Order statistics and rounding of the WebSocket legs' own measurements (wrk computes its own). */

export interface Spread {
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentiles (p99 of 30 values is the largest: no interpolation invents a value). */
export function spread(values: readonly number[]): Spread | undefined {
  if (values.length === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  const rank = (p: number): number => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] as number;
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    p50: rank(50),
    p90: rank(90),
    p99: rank(99),
    mean: sum / sorted.length,
    max: sorted[sorted.length - 1] as number,
  };
}

export function roundSpread(s: Spread, digits = 3): Spread {
  const f = 10 ** digits;
  const r = (n: number): number => Math.round(n * f) / f;
  return { p50: r(s.p50), p90: r(s.p90), p99: r(s.p99), mean: r(s.mean), max: r(s.max) };
}

export function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** The kernel's share of a process's CPU from a client's `cpu_us` map (`<pid>` total, `<pid>:system` stime). */
export function systemShare(cpu: Record<string, number>, pid: number): { cpu_system_share?: number } {
  const total = cpu[String(pid)];
  const system = cpu[`${pid}:system`];
  return total === undefined || system === undefined || total === 0
    ? {}
    : { cpu_system_share: round(system / total, 3) };
}
