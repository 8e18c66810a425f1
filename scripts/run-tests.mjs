#!/usr/bin/env node
// Runs the whole test suite with Node's test runner: unit tests beside the code (src/**/*.test.ts) and
// scenario tests (test/**/*.test.ts). Node 20's runner does not expand globs, so files are listed here.
// Usage: node scripts/run-tests.mjs [path-filter ...]
//
// Two passes: every file on the embedded SQLite store, then the store-dependent suites (POSTGRES_SUITES)
// again against a throwaway PostgreSQL 15 cluster (test/helpers/postgres.ts; one cluster per run, one
// database per test file), so the API behaves the same on both backends.
// SWITCHYARD_TEST_BACKENDS=sqlite|postgres|both (default both) picks the passes. Without the PostgreSQL
// binaries the second pass is skipped with a warning, or fails when CI is set (CI must run both).
// Each file must finish within 15 minutes (--test-timeout): the Dockerfile test plays two npm installs and
// a build, several minutes on a busy 2-core machine; every test bounds its own waits far below that.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(dir) {
  let out = [];
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const entry of entries) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out = out.concat(collect(path));
    else if (entry.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = [...collect('src'), ...collect('test')]
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
/** Test files (path prefixes) that run a second time on PostgreSQL. Add store-dependent suites here. */
const POSTGRES_SUITES = [
  'test/api/',
  'test/incidents/policies.test.ts',
  'src/incidents/detector.test.ts',
  'test/incidents/serve-processes.test.ts',
  'test/gateway/devnet-alert-seed.test.ts',
  'test/gateway/readiness.test.ts',
  'test/gateway/gateway-keys.test.ts',
  'test/gateway/refusal-order.test.ts',
  'test/gateway/keys-redis.test.ts',
  'test/gateway/instances.test.ts',
  'test/gateway/websocket-notifications-paid.test.ts',
  'src/keys/keys-store.test.ts',
  'src/store/clock-offset.test.ts',
  'test/health/keyed-origin.test.ts',
  'test/health/multi-process.test.ts',
  'test/health/store.test.ts',
  'test/notifications/api.test.ts',
  'test/notifications/list-defaults.test.ts',
  'test/notifications/concurrency.test.ts',
  'test/notifications/webhook-delivery.test.ts',
  'test/notifications/serve-processes.test.ts',
  'test/notifications/retention.test.ts',
  'test/notifications/email.test.ts',
  'test/notifications/smtp-tls.test.ts',
  'test/notifications/health-e2e.test.ts',
  'test/notifications/late-events.test.ts',
  'test/migration/real-server.test.ts',
  'test/limits/quota-concurrency.test.ts',
  'test/ledger/alerts.test.ts',
  'test/ledger/instances.test.ts',
  'src/ledger/queries.test.ts',
  'test/ledger/policies.test.ts',
  'test/reload/reload.test.ts',
];

function runFiles(list, env = {}) {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=900000', ...list],
    { stdio: 'inherit', env: { ...process.env, ...env } },
  );
  return result.status ?? 1;
}

const backends = process.env.SWITCHYARD_TEST_BACKENDS ?? 'both';
let status = 0;
if (backends !== 'postgres') status = runFiles(files);

const pgFiles = files.filter((file) => POSTGRES_SUITES.some((prefix) => file.startsWith(prefix)));
if (backends !== 'sqlite' && pgFiles.length > 0) {
  const { tsImport } = await import('tsx/esm/api');
  const postgres = await tsImport('../test/helpers/postgres.ts', import.meta.url);
  if (!postgres.postgresAvailable()) {
    console.error(`PostgreSQL pass ${process.env.CI ? 'FAILED' : 'skipped'}: no binaries in ${postgres.PG_BIN}`);
    if (process.env.CI) status = 1;
  } else {
    console.error(`\n── PostgreSQL pass: ${pgFiles.length} file(s) ──`);
    const cluster = await postgres.startPostgres();
    const stop = () => cluster.stop();
    process.once('exit', stop);
    try {
      const pgStatus = runFiles(pgFiles, { SWITCHYARD_TEST_DATABASE_URL: cluster.adminUrl });
      if (status === 0) status = pgStatus;
    } finally {
      process.off('exit', stop);
      stop();
    }
  }
}
process.exit(status);
