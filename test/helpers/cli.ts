/**
 * Runs the CLI from source as a child process (`node --import tsx src/cli/run.ts …`), so no build is
 * needed. `runCli` waits for the exit (bounded); `spawnCli` returns a handle for long-running commands
 * such as `serve`, with bounded waits on its JSON log lines. A child counts as exited on 'close' (after
 * its stdout and stderr ended), not 'exit', so its last output and log lines are never missed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface CliOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  timeoutMs?: number;
  input?: string;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function spawnRaw(args: readonly string[], options: CliOptions): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src/cli/run.ts'), ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  const child = spawnRaw(args, options);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdin?.end(options.input ?? '');
  const timeoutMs = options.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`switchyard ${args.join(' ')} did not exit within ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export interface CliProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Every stderr line parsed as JSON (non-JSON lines are kept as {msg: line}). */
  readonly logs: Array<Record<string, unknown>>;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first log line (past or future) matching `predicate`; rejects after `timeoutMs`. */
  waitForLog(
    predicate: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  waitForExit(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
}

export function spawnCli(args: readonly string[], options: CliOptions = {}): CliProcess {
  const child = spawnRaw(args, options);
  if (child.pid === undefined) throw new Error('could not spawn the CLI');
  const logs: Array<Record<string, unknown>> = [];
  const waiters = new Set<() => void>();
  let out = '';
  let err = '';
  let partial = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    err += text;
    partial += text;
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        logs.push({ msg: line });
      }
    }
    for (const wake of waiters) wake();
  });
  let exited = false;
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      // Set before waking the waiters, so a waiter whose line never came fails now, not at its timeout.
      exited = true;
      resolve({ code, signal });
      for (const wake of waiters) wake();
    });
  });
  return {
    child,
    pid: child.pid,
    logs,
    stdout: () => out,
    stderr: () => err,
    waitForLog(predicate, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const found = logs.find(predicate);
          if (found !== undefined) {
            finish();
            resolve(found);
            return true;
          }
          if (exited) {
            finish();
            reject(new Error(`process exited before the awaited log line\n${err}`));
            return true;
          }
          return false;
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`awaited log line did not appear within ${timeoutMs} ms\n${err}`));
        }, timeoutMs);
        const finish = (): void => {
          clearTimeout(timer);
          waiters.delete(wake);
        };
        const wake = (): void => {
          check();
        };
        if (!check()) waiters.add(wake);
      });
    },
    async waitForExit(timeoutMs = 30_000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`process did not exit within ${timeoutMs} ms\n${err}`)), timeoutMs);
      });
      try {
        return await Promise.race([exit, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (!exited) child.kill(signal);
    },
  };
}

/**
 * Writes `dir/serve.yaml` for a `serve` child with `gateway.workers`: its data_dir in `dir`, both
 * listeners on port 0, then `lines` (networks, pools, …). Returns the file's path.
 */
export function writeWorkersConfig(dir: string, lines: readonly string[], workers = 2): string {
  const file = join(dir, 'serve.yaml');
  const head = [
    `data_dir: ${JSON.stringify(join(dir, 'data'))}`,
    `gateway: { listen: "127.0.0.1:0", workers: ${workers} }`,
    'api: { listen: "127.0.0.1:0" }',
  ];
  writeFileSync(file, [...head, ...lines, ''].join('\n'));
  return file;
}

/** Waits until a `serve` child with workers serves (every worker listening, start-up logged): its addresses. */
export async function waitForWorkersServing(proc: CliProcess): Promise<{ gateway: string; api: string }> {
  await proc.waitForLog((line) => line.msg === 'gateway workers serving', 60_000);
  const started = await proc.waitForLog((line) => line.msg === 'switchyard started', 60_000);
  return { gateway: String(started.gateway), api: String(started.api) };
}
