/**
 * The processes a benchmark run starts (nginx, Switchyard, anvil, the fan-out process): spawned directly
 * (no shell, so the PID we hold is the server itself and /proc readings are about it), their stderr kept
 * in a short ring for error messages, and stopped by that PID: SIGTERM, then SIGKILL after
 * `stopTimeoutMs`. With `lines: true` the child also talks in lines: `writeLine` to its stdin, and
 * `nextLine(prefix)` waits (bounded) for the next stdout line starting with that prefix. Every child
 * still running is known, so a run interrupted by a signal ends them all at once (`endAllNow`, run.ts)
 * instead of leaving them orphaned.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';

const STDERR_TAIL = 4096; // bytes of stderr kept for error messages

/** The children that have not exited yet. */
const running = new Set<Child>();

export class Child {
  readonly name: string;
  readonly #process: ChildProcess;
  #stderr = '';
  #exit: Promise<number | null>;
  #exited = false;
  /** stdout lines not yet taken by nextLine (lines mode). */
  readonly #lines: string[] = [];
  #lineArrived: (() => void) | undefined;

  constructor(
    name: string,
    command: string,
    args: string[],
    options: { cwd?: string; env?: NodeJS.ProcessEnv; lines?: boolean } = {},
  ) {
    this.name = name;
    this.#process = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: options.lines ? ['pipe', 'pipe', 'pipe'] : ['ignore', 'ignore', 'pipe'],
    });
    if (options.lines && this.#process.stdout !== null) {
      createInterface({ input: this.#process.stdout }).on('line', (line) => {
        this.#lines.push(line);
        this.#lineArrived?.();
      });
    }
    this.#process.stderr?.setEncoding('utf8');
    this.#process.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL);
    });
    running.add(this);
    this.#exit = new Promise((resolve) => {
      this.#process.once('exit', (code) => {
        this.#exited = true;
        running.delete(this);
        resolve(code);
      });
      this.#process.once('error', (err) => {
        this.#exited = true;
        running.delete(this);
        this.#stderr += `\nspawn failed: ${err.message}`;
        resolve(null);
      });
    });
  }

  get pid(): number {
    const pid = this.#process.pid;
    if (pid === undefined) throw new Error(`${this.name} did not start: ${this.#stderr.trim()}`);
    return pid;
  }

  get exited(): boolean {
    return this.#exited;
  }

  get stderrTail(): string {
    return this.#stderr.trim();
  }

  /** Resolves once the child accepts TCP connections on 127.0.0.1:port; rejects if it exits or the bound passes. */
  async waitForPort(port: number, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.#exited) throw new Error(`${this.name} exited during start: ${this.stderrTail}`);
      if (await canConnect(port)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${this.name} did not listen on 127.0.0.1:${port} within ${timeoutMs} ms: ${this.stderrTail}`);
  }

  /** Writes one line to the child's stdin (lines mode). */
  writeLine(line: string): void {
    this.#process.stdin?.write(`${line}\n`);
  }

  /** The next stdout line starting with `prefix` (earlier other lines are dropped); rejects at the bound or exit. */
  async nextLine(prefix: string, timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while (this.#lines.length > 0) {
        const line = this.#lines.shift() as string;
        if (line.startsWith(prefix)) return line;
      }
      if (this.#exited) throw new Error(`${this.name} exited: ${this.stderrTail}`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`${this.name} gave no "${prefix}" line within ${timeoutMs} ms: ${this.stderrTail}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 1_000));
        this.#lineArrived = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#lineArrived = undefined;
    }
  }

  /** SIGTERM to every child still running, without waiting: the run is ending on a signal. */
  static endAllNow(): void {
    for (const child of running) child.#process.kill('SIGTERM');
  }

  async stop(stopTimeoutMs = 5_000): Promise<void> {
    if (this.#exited || this.#process.pid === undefined) return;
    this.#process.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (!this.#exited) this.#process.kill('SIGKILL');
    }, stopTimeoutMs);
    await this.#exit;
    clearTimeout(timer);
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
