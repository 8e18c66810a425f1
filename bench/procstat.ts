/**
 * Reads what the kernel knows about a process under test: CPU time (utime + stime from
 * /proc/<pid>/stat, in clock ticks of 10 ms on Linux) and memory (VmRSS, VmHWM from /proc/<pid>/status).
 * `resetPeak` writes 5 to /proc/<pid>/clear_refs, which resets VmHWM so each leg reports its own peak;
 * when that is not allowed (not the owner, old kernel) the peak stays the process-lifetime one and the
 * sample says so.
 */
import { readFileSync, writeFileSync } from 'node:fs';

/** USER_HZ. Linux exposes 100 to user space on every architecture Node supports. */
const TICKS_PER_SECOND = 100;

export interface CpuSample {
  /** utime + stime of every thread of the process, in microseconds. */
  cpuMicros: number;
  /** stime alone: the kernel's share (system calls, e.g. loopback TCP writes), in microseconds. */
  systemMicros: number;
}

export function cpuSample(pid: number): CpuSample {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces and parentheses: fields count from after the last ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state), so utime (field 14) is rest[11] and stime (field 15) is rest[12].
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`cannot parse /proc/${pid}/stat`);
  return {
    cpuMicros: ((utime + stime) * 1_000_000) / TICKS_PER_SECOND,
    systemMicros: (stime * 1_000_000) / TICKS_PER_SECOND,
  };
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
