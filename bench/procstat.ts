/**
 * Reads what the kernel knows about a process under test: CPU time (utime + stime from
 * /proc/<pid>/stat, in clock ticks of 10 ms on Linux) and memory (VmRSS, VmHWM from /proc/<pid>/status).
 * `resetPeak` writes 5 to /proc/<pid>/clear_refs, which resets VmHWM so each leg reports its own peak;
 * when that is not allowed (not the owner, old kernel) the peak stays the process-lifetime one and the
 * sample says so.
 *
 * A Switchyard with `gateway.workers` > 1 is a control process and its children, the workers
 * (node:cluster forks): `treeCpuSample` reads the process and every direct child (found by scanning
 * /proc/<n>/stat for the parent PID — /proc/<pid>/task/<tid>/children needs CONFIG_PROC_CHILDREN, which
 * this kernel lacks), and `treeMemorySample` sums RSS over the same processes.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** USER_HZ. Linux exposes 100 to user space on every architecture Node supports. */
const TICKS_PER_SECOND = 100;

export interface CpuSample {
  /** utime + stime of every thread of the process, in microseconds. */
  cpuMicros: number;
  /** stime alone: the kernel's share (system calls, e.g. loopback TCP writes), in microseconds. */
  systemMicros: number;
}

/** The fields of /proc/<pid>/stat after the command name: rest[0] is field 3 (state). */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces and parentheses: fields count from after the last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

export function cpuSample(pid: number): CpuSample {
  const rest = statFields(pid);
  // rest[0] is field 3 (state), so utime (field 14) is rest[11] and stime (field 15) is rest[12].
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`cannot parse /proc/${pid}/stat`);
  return {
    cpuMicros: ((utime + stime) * 1_000_000) / TICKS_PER_SECOND,
    systemMicros: (stime * 1_000_000) / TICKS_PER_SECOND,
  };
}

/** CPU µs of each process: `"<pid>"` user + system, `"<pid>:system"` system alone (the WebSocket clients' report). */
export function cpuByPid(pids: readonly number[]): Record<string, number> {
  return Object.fromEntries(
    pids.flatMap((pid) => {
      const sample = cpuSample(pid);
      return [
        [String(pid), sample.cpuMicros],
        [`${pid}:system`, sample.systemMicros],
      ];
    }),
  );
}

export interface MemorySample {
  rssBytes: number;
  peakRssBytes: number;
}

export function memorySample(pid: number): MemorySample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (match === null) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Number(match[1]) * 1024;
  };
  return { rssBytes: kb('VmRSS'), peakRssBytes: kb('VmHWM') };
}

/** Resets the process's peak RSS to its current RSS. Returns false when the kernel refuses. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** The PIDs whose parent is `pid` (field 4 of /proc/<n>/stat), ascending; processes gone meanwhile are skipped. */
export function childPids(pid: number): number[] {
  const children: number[] = [];
  for (const name of readdirSync('/proc')) {
    const n = Number(name);
    if (!Number.isInteger(n) || n === pid) continue;
    try {
      if (Number(statFields(n)[1]) === pid) children.push(n);
    } catch {
      // exited between readdir and read
    }
  }
  return children.sort((a, b) => a - b);
}

export interface TreeCpuSample {
  /** The process itself. */
  root: CpuSample & { pid: number };
  /** Its direct children at the time of the sample (for Switchyard with workers > 1: the workers). */
  children: Array<CpuSample & { pid: number }>;
}

/** CPU of a process and of each of its direct children, read one after another (a few ms apart at most). */
export function treeCpuSample(pid: number): TreeCpuSample {
  const children: TreeCpuSample['children'] = [];
  for (const child of childPids(pid)) {
    try {
      children.push({ pid: child, ...cpuSample(child) });
    } catch {
      // exited since childPids saw it
    }
  }
  return { root: { pid, ...cpuSample(pid) }, children };
}

/** RSS and peak RSS summed over a process and its direct children (the sum of peaks bounds the peak of the sum). */
export function treeMemorySample(pid: number): MemorySample & { processes: number } {
  let rssBytes = 0;
  let peakRssBytes = 0;
  let processes = 0;
  for (const each of [pid, ...childPids(pid)]) {
    try {
      const sample = memorySample(each);
      rssBytes += sample.rssBytes;
      peakRssBytes += sample.peakRssBytes;
      processes++;
    } catch (err) {
      if (each === pid) throw err;
    }
  }
  return { rssBytes, peakRssBytes, processes };
}

/** `resetPeak` for a process and its direct children; false when any refused. */
export function resetTreePeak(pid: number): boolean {
  let all = true;
  for (const each of [pid, ...childPids(pid)]) if (!resetPeak(each)) all = false;
  return all;
}
