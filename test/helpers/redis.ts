/**
 * A throwaway redis-server for tests (SPEC §11 global limits): no persistence, bound to 127.0.0.1 on a
 * free port (redis-server cannot take port 0, so a port the kernel just handed out is used; a lost race
 * is retried on another). Ready when it answers PING; stopped by PID (`stop()`, SIGTERM) or killed
 * (`kill()`, SIGKILL, to simulate an outage). `SWITCHYARD_REDIS_SERVER` points at another binary.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, Socket } from 'node:net';

export interface TestRedis {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Stops it (SIGTERM) and waits for the exit. */
  stop(): Promise<void>;
  /** Kills it at once (SIGKILL), as a crash would, and waits for the exit. */
  kill(): Promise<void>;
}

export const BINARY = process.env.SWITCHYARD_REDIS_SERVER ?? '/usr/bin/redis-server';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let reply = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.on('error', () => done(false));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
    socket.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
  });
}

/** Starts redis-server; `port` reuses a port (e.g. to bring a killed server back on the same URL). */
export async function startTestRedis(port?: number): Promise<TestRedis> {
  for (let attempt = 0; ; attempt += 1) {
    const chosen = port ?? (await freePort());
    const child = spawn(
      BINARY,
      ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + 10_000;
    let alive = true;
    child.once('exit', () => {
      alive = false;
    });
    while (alive && Date.now() < deadline && !(await answersPing(chosen))) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (alive && (await answersPing(chosen))) return handle(child, chosen, exited);
    child.kill('SIGKILL');
    await exited;
    if (port !== undefined || attempt >= 3) throw new Error(`redis-server did not start on port ${chosen}`);
  }
}

function handle(child: ChildProcess, port: number, exited: Promise<void>): TestRedis {
  const pid = child.pid as number;
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) process.kill(pid, signal);
    await exited;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
  };
}
