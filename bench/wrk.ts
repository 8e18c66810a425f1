/**
 * Drives one leg with wrk for a fixed duration: `wrk -t<threads> -c<connections> -d<seconds>s` with
 * `post.lua`, which POSTs a body file and prints its results as one JSON line. The run is bounded
 * (duration plus a 30 s grace, then the process is killed).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./post.lua', import.meta.url));

export interface WrkResult {
  requests: number;
  durationSeconds: number;
  bytes: number;
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  latencyMicros: { min: number; mean: number; p50: number; p90: number; p99: number; max: number };
}

interface RawWrk {
  requests: number;
  duration_us: number;
  bytes: number;
  errors: WrkResult['errors'];
  latency_us: WrkResult['latencyMicros'];
}

export function runWrk(options: {
  binary: string;
  url: string;
  bodyFile: string;
  seconds: number;
  connections: number;
  threads: number;
}): Promise<WrkResult> {
  const args = [
    `-t${options.threads}`,
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    '--timeout',
    '10s',
    '-s',
    SCRIPT,
    options.url,
    '--',
    options.bodyFile,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(options.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), (options.seconds + 30) * 1000);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith('WRK_JSON '));
      if (code !== 0 || line === undefined) {
        reject(new Error(`wrk exited with ${code}: ${(err || out).trim().slice(-500)}`));
        return;
      }
      const raw = JSON.parse(line.slice('WRK_JSON '.length)) as RawWrk;
      resolve({
        requests: raw.requests,
        durationSeconds: raw.duration_us / 1e6,
        bytes: raw.bytes,
        errors: raw.errors,
        latencyMicros: raw.latency_us,
      });
    });
  });
}
