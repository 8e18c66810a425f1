/**
 * One anvil node (from the npm package `@foundry-rs/anvil`) as a child process, spawned directly (no
 * shell, no npx) so its PID is the node's own and stopping it by PID is exact.
 *
 * - Port 0 lets anvil pick a free port; the bound address is read from its "Listening on host:port"
 *   line, then readiness is confirmed with eth_chainId (bounded by `readyTimeoutMs`, default 15 s).
 * - `timestamp` fixes the genesis timestamp, so nodes started with the same one share a genesis block.
 * - `noMining` (`--no-mining`): the node mines only when told (evm_mine, or after evm_setAutomine true);
 *   `order` is anvil's `--order` (`fees` by default; `fifo` mines in arrival order, which block replay
 *   relies on, see replay.ts).
 * - `hardfork` (`--hardfork`, e.g. `berlin`, `prague`): the fork the node runs; anvil's newest by default.
 * - stdout/stderr are drained (anvil logs every call; an undrained pipe would stall it).
 * - `stop()` sends SIGTERM, waits up to 3 s, then SIGKILL. `killNow()` is the synchronous SIGKILL used
 *   from process 'exit' handlers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';

export interface AnvilOptions {
  chainId: number;
  /** 0 = let anvil pick a free port. */
  port?: number;
  host?: string;
  /** Seconds between blocks; 0 = mine a block for each transaction. */
  blockTime?: number;
  /** Genesis timestamp (seconds since the epoch). */
  timestamp?: number;
  /** Start with mining off (`--no-mining`); `blockTime` is then ignored. */
  noMining?: boolean;
  /** Pool order (`--order`). */
  order?: 'fees' | 'fifo';
  hardfork?: string;
  readyTimeoutMs?: number;
}

export interface AnvilNode {
  readonly pid: number;
  readonly url: string;
  readonly port: number;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  stop(): Promise<void>;
  killNow(): void;
}

const require = createRequire(import.meta.url);

export function anvilBinary(): string {
  return require.resolve('@foundry-rs/anvil-linux-amd64/bin/anvil');
}

export async function startAnvil(options: AnvilOptions): Promise<AnvilNode> {
  const host = options.host ?? '127.0.0.1';
  const args = ['--host', host, '--port', String(options.port ?? 0), '--chain-id', String(options.chainId)];
  if (options.noMining) args.push('--no-mining');
  else if (options.blockTime !== undefined && options.blockTime > 0)
    args.push('--block-time', String(options.blockTime));
  if (options.order !== undefined) args.push('--order', options.order);
  if (options.timestamp !== undefined) args.push('--timestamp', String(options.timestamp));
  if (options.hardfork !== undefined) args.push('--hardfork', options.hardfork);
  const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid;
  if (pid === undefined) {
    const error = await new Promise<Error>((resolve) => child.once('error', resolve));
    throw new Error(`cannot start anvil: ${error.message}`);
  }
  let exitedNow = false;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exitedNow = true;
      resolve();
    });
  });
  const node = (port: number): AnvilNode => ({
    pid,
    port,
    url: `http://${host}:${port}`,
    exited,
    stop: () => stopChild(child, exited, () => exitedNow),
    killNow: () => {
      if (!exitedNow) killQuietly(pid, 'SIGKILL');
    },
  });
  const timeoutMs = options.readyTimeoutMs ?? 15_000;
  try {
    const port = await withTimeout(listeningPort(child), timeoutMs, 'anvil did not report its port');
    const started = node(port);
    await withTimeout(answersChainId(started.url, exited), timeoutMs, 'anvil did not answer eth_chainId');
    return started;
  } catch (err) {
    killQuietly(pid, 'SIGKILL');
    await exited;
    throw err;
  }
}

function listeningPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let seen = '';
    let found = false;
    const tail: string[] = [];
    child.stderr?.on('data', (chunk: Buffer) => {
      tail.push(chunk.toString());
      if (tail.length > 20) tail.shift();
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      if (found) return; // keep draining, stop parsing
      seen += chunk.toString();
      const match = /Listening on [^\s]*:(\d+)/.exec(seen);
      if (match) {
        found = true;
        seen = '';
        resolve(Number(match[1]));
      } else if (seen.length > 65_536) {
        seen = seen.slice(-1024);
      }
    });
    child.once('exit', (code, signal) => {
      if (!found) reject(new Error(`anvil exited (${signal ?? code}) before listening: ${tail.join('').trim()}`));
    });
  });
}

async function answersChainId(url: string, exited: Promise<void>): Promise<void> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  for (;;) {
    if (gone) throw new Error('anvil exited while starting');
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
        signal: AbortSignal.timeout(1000),
      });
      if (res.ok && (await res.text()).includes('"result"')) return;
    } catch {
      // not accepting yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stopChild(child: ChildProcess, exited: Promise<void>, isExited: () => boolean): Promise<void> {
  if (isExited() || child.pid === undefined) return;
  killQuietly(child.pid, 'SIGTERM');
  const timer = setTimeout(() => {
    if (!isExited() && child.pid !== undefined) killQuietly(child.pid, 'SIGKILL');
  }, 3000);
  await exited;
  clearTimeout(timer);
}

function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
