/**
 * The usual process and runtime series, read from `node:` APIs at scrape time (nothing on the hot path):
 *
 *   process_cpu_seconds_total           user + system CPU time (process.cpuUsage)
 *   process_resident_memory_bytes       resident set size (process.memoryUsage.rss)
 *   process_open_fds                    open file descriptors (/proc/self/fd; absent where there is none)
 *   nodejs_heap_size_total_bytes        V8 heap reserved
 *   nodejs_heap_size_used_bytes         V8 heap in use
 *   nodejs_external_memory_bytes        memory of C++ objects bound to JavaScript (Buffers among them)
 *   nodejs_eventloop_lag_seconds        the event loop's worst delay since the previous scrape
 *                                       (perf_hooks.monitorEventLoopDelay, sampled every 20 ms)
 *
 * Every process registers them in its own registry (the control process and each gateway worker): the
 * control's `/metrics` adds them up (merge.ts), so CPU, memory and descriptors are those of the whole
 * instance, while the lag keeps the largest process's value (`merge: 'max'`).
 *
 * No client library: prom-client's default metrics read the same calls, but live in a registry of
 * their own that would have to be converted on every scrape (docs/operations.md "Monitoring").
 */
import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { MetricsRegistry } from './registry.js';

/** How often the event loop's delay is sampled (ms). */
const LAG_RESOLUTION_MS = 20;

export function registerProcessMetrics(metrics: MetricsRegistry): void {
  metrics.counter('process_cpu_seconds_total', 'User and system CPU time spent, in seconds', [], {
    collect: () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1e6;
    },
  });
  metrics.gauge('process_resident_memory_bytes', 'Resident memory size in bytes', [], () => process.memoryUsage.rss());
  if (openFds() !== undefined) {
    metrics.gauge('process_open_fds', 'Open file descriptors', [], () => openFds() ?? 0);
  }
  metrics.gauge('nodejs_heap_size_total_bytes', 'V8 heap size reserved, in bytes', [], () => heap().heapTotal);
  metrics.gauge('nodejs_heap_size_used_bytes', 'V8 heap size in use, in bytes', [], () => heap().heapUsed);
  metrics.gauge('nodejs_external_memory_bytes', 'Memory of C++ objects bound to JavaScript, in bytes', [], () => {
    return heap().external;
  });
  const delay = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
  delay.enable();
  metrics.gauge('nodejs_eventloop_lag_seconds', 'Worst event-loop delay since the previous scrape, in seconds', [], {
    collect: () => {
      // Nanoseconds; a histogram that saw no sample yet reports its minimum bound.
      const worst = delay.count === 0 ? 0 : delay.max / 1e9;
      delay.reset();
      return worst;
    },
    merge: 'max',
  });
}

function heap(): NodeJS.MemoryUsage {
  return process.memoryUsage();
}

function openFds(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return undefined;
  }
}
