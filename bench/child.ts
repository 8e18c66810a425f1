/**
 * The processes a benchmark run starts (nginx, Switchyard, anvil): spawned directly (no shell, so the
 * PID we hold is the server itself and /proc readings are about it), their stderr kept in a short
 * ring for error messages, and stopped by that PID: SIGTERM, then SIGKILL after `stopTimeoutMs`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';

const STDERR_TAIL = 4096; // bytes of stderr kept for error messages

export class Child {
  readonly name: string;
  readonly #process: ChildProcess;
  #stderr = '';
  #exit: Promise<number | null>;
  #exited = false;

  constructor(name: string, command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
    this.name = name;
    this.#process = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.#process.stderr?.setEncoding('utf8');
    this.#process.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL);
    });
    this.#exit = new Promise((resolve) => {
      this.#process.once('exit', (code) => {
        this.#exited = true;
        resolve(code);
      });
      this.#process.once('error', (err) => {
        this.#exited = true;
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
