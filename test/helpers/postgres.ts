/**
 * A throwaway PostgreSQL 15 cluster for the PostgreSQL pass of the test suite (Debian's postgresql-15
 * binaries; `npm test` installs them: scripts/ensure-system.ts). One cluster per test run, shared by
 * every test file; each file creates its own database in it (test/helpers/store.ts), so files never see
 * each other's rows.
 *
 * The cluster lives in a fresh temp directory, listens on 127.0.0.1 on a free port (socket in the same
 * directory), runs with fsync off (speed; the data is thrown away), trusts local connections, and is
 * stopped with `pg_ctl stop -m immediate` (only this cluster, by its data directory) and removed.
 * As root, initdb and pg_ctl run as the `postgres` user (PostgreSQL refuses to run as root).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export const PG_BIN = process.env.SWITCHYARD_PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface PostgresCluster {
  /** Superuser URL of the `postgres` database, e.g. postgres://postgres@127.0.0.1:54321/postgres */
  readonly adminUrl: string;
  stop(): void;
}

export function postgresAvailable(): boolean {
  return existsSync(join(PG_BIN, 'initdb')) && existsSync(join(PG_BIN, 'pg_ctl'));
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startPostgres(): Promise<PostgresCluster> {
  if (!postgresAvailable()) {
    throw new Error(`PostgreSQL binaries not found in ${PG_BIN}; install postgresql-15 (see .ci/run)`);
  }
  const asRoot = process.getuid?.() === 0;
  // As root the postgres user must reach the directory: /tmp is world-traversable, a custom TMPDIR may not be.
  const dir = mkdtempSync(join(asRoot ? '/tmp' : tmpdir(), 'switchyard-pg-'));
  const data = join(dir, 'data');
  const run = (tool: string, args: string[]) => {
    const command = join(PG_BIN, tool);
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
    execFileSync(file, argv, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  };
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
  }
  const user = asRoot ? 'postgres' : userInfo().username;
  let started = false;
  try {
    run('initdb', ['-D', data, '-U', user, '--auth=trust', '--encoding=UTF8', '--no-sync']);
    const port = await freePort();
    const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
    run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']);
    started = true;
    return {
      adminUrl: `postgres://${user}@127.0.0.1:${port}/postgres`,
      stop() {
        try {
          run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    if (started) {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already down
      }
    }
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
