/**
 * `data_dir/serve.pid`: how `switchyard reload` (and `kill -HUP $(cat data/serve.pid)`) finds the running
 * `serve`. `serve` writes its process id there (one line) as it starts, before the config's parts do,
 * and removes the file when it exits cleanly — only if the file still names it. A file left by a
 * `serve` that was killed is stale: `findServe` says so when the process is gone or, where /proc shows
 * command lines (Linux), when the process is no `serve` (its pid was reused); the next `serve` replaces it.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PID_FILE = 'serve.pid';

export function pidFilePath(dataDir: string): string {
  return join(dataDir, PID_FILE);
}

/**
 * Writes this process's id into `dataDir/serve.pid`; returns what removes it again (if it still names
 * this process). `previous` hears of a running serve the file named before (it is replaced all the same).
 */
export function writePidFile(dataDir: string, previous: (pid: number) => void): () => void {
  const file = pidFilePath(dataDir);
  const before = findServe(dataDir);
  if ('pid' in before && before.pid !== process.pid) previous(before.pid);
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${process.pid}\n`);
  return () => {
    if (readPid(file) === process.pid) rmSync(file, { force: true });
  };
}

/** The running serve of `dataDir`, or why there is none (a message for the operator). */
export function findServe(dataDir: string): { pid: number } | { problem: string } {
  const file = pidFilePath(dataDir);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { problem: `no ${file}: serve is not running with data_dir ${dataDir}` };
    return { problem: `cannot read ${file} (${code ?? 'error'})` };
  }
  const pid = parsePid(text);
  if (pid === undefined) return { problem: `${file} holds no process id` };
  const stale = `${file} names process ${pid}, which is`;
  const left = 'the file is left from a serve that did not exit cleanly (the next serve replaces it)';
  if (!isAlive(pid)) return { problem: `${stale} not running: ${left}` };
  if (!isServe(pid)) return { problem: `${stale} not a switchyard serve: ${left}` };
  return { pid };
}

function readPid(file: string): number | undefined {
  try {
    return parsePid(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function parsePid(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^\d{1,10}$/.test(trimmed)) return undefined;
  const pid = Number(trimmed);
  return pid > 0 ? pid : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, run by another user (the signal itself will say so).
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the process's command line has a `serve` argument (true where /proc cannot tell). */
function isServe(pid: number): boolean {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return true;
  }
  return cmdline.split('\0').includes('serve');
}
