/**
 * `switchyard migrate-notifications` against a stub v4 API (test/migration/stub-api.ts): the happy path,
 * servers that ignore pagination, bad credentials, interruptions and pools appearing mid-run.
 * The stub audits every bulk PATCH: no pool may be cleared without a policy covering it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { expectedPolicies, fixturePools, policyKey } from './fixture.js';
import { runCommand } from './run-command.js';
import { StubApi, type StubOptions } from './stub-api.js';

const ACCOUNT = '0123456789abcdef0123456789abcdef';
const TOKEN = 'stub-token-with-write-access';

let stub: StubApi | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

async function startStub(options: Partial<StubOptions> = {}, count?: number): Promise<StubApi> {
  stub = await StubApi.start({ accountId: ACCOUNT, token: TOKEN, ...options });
  for (const pool of fixturePools(count)) stub.addPool(pool.name, pool.notification_email, pool.notification_filter);
  return stub;
}

function args(api: StubApi, ...extra: string[]): string[] {
  return ['--account', ACCOUNT, '--api-url', api.url, ...extra];
}

const env = { CLOUDFLARE_API_TOKEN: TOKEN };

/** Policies in the stub as key → sorted pool names. */
function policiesByKey(api: StubApi): Map<string, string[]> {
  const names = new Map([...api.pools.values()].map((pool) => [pool.id, pool.name]));
  return new Map(
    [...api.policies.values()].map((p) => [
      policyKey(p),
      (p.filters.pool_id ?? []).map((id) => names.get(id) ?? id).sort(),
    ]),
  );
}

describe('migrate-notifications against a stub API', () => {
  test('migrates 64 pools: right policies, every email cleared page by page, re-run writes nothing', async () => {
    const api = await startStub();
    const run = await runCommand(args(api, '--yes'), { env });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.deepEqual(api.violations, []);
    assert.deepEqual(api.withEmail(), [], 'every pool is empty');
    assert.deepEqual(policiesByKey(api), expectedPolicies(fixturePools()));
    for (const policy of api.policies.values()) {
      assert.equal(policy.alert_type, 'load_balancing_health_alert');
      assert.equal(policy.enabled, true);
      assert.match(policy.description, /switchyard-migration:[0-9a-f]{16}/);
    }
    // 64 pools at 25 per page: three bulk PATCHes, each with page and per_page
    const patches = api.requests.filter((line) => line.startsWith('PATCH '));
    assert.deepEqual(
      patches.map((line) => new URL(line.split(' ')[1]!, 'http://x').search),
      ['?page=1&per_page=25', '?page=2&per_page=25', '?page=3&per_page=25'],
    );
    assert.match(run.stdout, /Policies \(5\): 5 to create, 0 to update, 0 already in place/);
    assert.match(run.stdout, /pool-005 +quiet@example\.com +- \(its notification_filter disables every alert/);
    assert.match(run.stdout, /result: complete/);

    const before = api.writes().length;
    const again = await runCommand(args(api, '--yes'), { env });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(api.writes().length, before, 're-run writes nothing');
    assert.equal(api.policies.size, 5);
    assert.match(again.stdout, /nothing to do/);
    assert.match(again.stdout, /Policies from earlier runs of this command \(marked switchyard-migration\): 5\./);
    assert.doesNotMatch(again.stdout, /policies: 0 created/, 'no counters of work that was not done');
    assert.doesNotMatch(again.stdout, / +$/m, 'no trailing spaces');
  });

  test('--dry-run prints the plan and changes nothing', async () => {
    const api = await startStub();
    const run = await runCommand(args(api, '--dry-run'), { env });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(api.writes(), []);
    assert.equal(api.withEmail().length, 56);
    assert.match(run.stdout, /Pools: 64 listed, 56 with a legacy notification_email, 8 already empty/);
    assert.match(run.stdout, /1 +create +a@example\.com, b@example\.com +pool → Unhealthy +8/);
    assert.match(run.stdout, /dry run — nothing was changed; 56 pool\(s\) would be migrated/);
    assert.match(
      run.stdout,
      /would create 5 and update 0 policies \(0 already in place\), then clear notification_email on 56 pool\(s\)/,
    );
    assert.doesNotMatch(run.stdout, /policies: 0 created/, 'a dry run shows what would happen, not zero counters');
  });

  test('a server that ignores pagination (every page is every pool): terminates and succeeds', async () => {
    const api = await startStub({ ignorePagination: true });
    const run = await runCommand(args(api, '--yes'), { env });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.deepEqual(api.withEmail(), []);
    assert.deepEqual(api.violations, []);
    assert.equal(api.policies.size, 5);
    // one listing, repeated page 2 detected; one PATCH clears the lot
    assert.equal(api.requests.filter((line) => line.startsWith('PATCH ')).length, 1);
    assert.ok(api.requests.length < 30, `bounded request count, got ${api.requests.length}`);
  });

  test('bad token or wrong account: non-zero exit, the v4 code in the message, nothing changed', async () => {
    const api = await startStub();
    const bad = await runCommand(args(api, '--yes', '--token', 'wrong'), { env });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /API error 10000: Authentication error \(HTTP 401\)/);
    assert.match(bad.stderr, /Check the token/);
    const other = await runCommand(['--account', 'f'.repeat(32), '--api-url', api.url, '--yes'], { env });
    assert.equal(other.code, 1);
    assert.match(other.stderr, /API error 10000: Authentication error \(HTTP 403\)/);
    assert.deepEqual(api.writes(), []);
    assert.equal(api.withEmail().length, 56);
  });

  test('interrupted by a failing PATCH: the re-run finishes without duplicate policies', async () => {
    let broken = true;
    const api = await startStub({ failPatch: (n) => (broken && n >= 2 ? 503 : undefined) });
    const first = await runCommand(args(api, '--yes'), { env });
    assert.equal(first.code, 1);
    assert.match(first.stderr, /API error 10001: stub: PATCH number \d+ fails \(HTTP 503\)/);
    assert.deepEqual(first.sleeps, [500, 1000, 2000, 4000], 'retried with exponential back-off, then gave up');
    assert.match(first.stdout, /Stopped by the error above/);
    assert.equal(api.withEmail().length, 56 - 22, 'page 1 (22 legacy pools) was cleared, the rest kept');
    assert.equal(api.policies.size, 5);

    broken = false;
    const second = await runCommand(args(api, '--yes'), { env });
    assert.equal(second.code, 0, second.stderr + second.stdout);
    assert.match(second.stdout, /0 to create, 0 to update, 5 already in place/);
    assert.equal(api.policies.size, 5, 'no duplicates');
    assert.deepEqual(api.withEmail(), []);
    assert.deepEqual(api.violations, []);
    assert.deepEqual(policiesByKey(api), expectedPolicies(fixturePools()), 'cleared pools stayed in their policies');
  });

  test('a pool created mid-run with a new address is not cleared until a later round covers it', async () => {
    const api = await startStub({
      beforePatch: (n, s) => {
        if (n === 1) s.addPool('pool-999-late', 'late@example.com');
      },
    });
    const run = await runCommand(args(api, '--yes'), { env });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.match(run.stdout, /Page 3 .*NOT cleared — 1 pool\(s\) not covered by a verified policy: pool-999-late/);
    assert.match(run.stdout, /Round 2: /);
    assert.deepEqual(api.violations, []);
    assert.deepEqual(api.withEmail(), []);
    assert.equal(api.policies.size, 6);
  });

  test('a pool appearing inside a page between the check and the PATCH is detected and reported', async () => {
    // The bulk PATCH has no "only these ids" guard, so this race cannot be prevented; it must be loud.
    const api = await startStub({
      beforePatch: (n, s) => {
        if (n === 2) s.addPool('pool-030-race', 'race@example.com');
      },
    });
    const run = await runCommand(args(api, '--yes'), { env });
    assert.equal(run.code, 3, run.stdout);
    assert.match(run.stdout, /the page shifted under the PATCH/);
    assert.match(
      run.stdout,
      /WARNING: a bulk PATCH also touched pools created or renamed during the run: pool-030-race/,
    );
    assert.equal(api.violations.length, 1, 'the stub saw exactly the reported pool cleared');
    assert.match(api.violations[0]!, /^pool-030-race /);
  });

  test('confirmation: no terminal and no --yes refuses before any request; "n" at the prompt cancels', async () => {
    const api = await startStub({}, 8);
    const refused = await runCommand(args(api), { env });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /refusing to change anything without confirmation.*--yes/);
    assert.deepEqual(api.requests, []);

    const cancelled = await runCommand(args(api), { env, answer: 'n' });
    assert.equal(cancelled.code, 4);
    assert.match(
      cancelled.stdout,
      /Create 5 and update 0 policies, then clear notification_email on 7 pools\? \[y\/N\]/,
    );
    assert.deepEqual(api.writes(), []);

    const accepted = await runCommand(args(api), { env, answer: 'yes' });
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.deepEqual(api.withEmail(), []);
  });

  test('--webhook-id adds the destination to every policy; an unknown one stops before any write', async () => {
    const api = await startStub({ webhookIds: ['hook-1'] }, 16);
    const unknown = await runCommand(args(api, '--yes', '--webhook-id', 'nope'), { env });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /API error 7003: webhook not found \(HTTP 404\)/);
    assert.deepEqual(api.writes(), []);

    const run = await runCommand(args(api, '--yes', '--webhook-id', 'hook-1', '--per-page', '5'), { env });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    for (const policy of api.policies.values()) assert.deepEqual(policy.mechanisms.webhooks, [{ id: 'hook-1' }]);
    assert.deepEqual(api.withEmail(), []);
    assert.deepEqual(api.violations, []);
  });

  test("without --api-url it finds this server's API from --config (a wildcard listen is reached on loopback)", async () => {
    const api = await startStub({}, 4);
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-migration-'));
    try {
      const file = join(dir, 'switchyard.yaml');
      writeFileSync(file, `api:\n  listen: "0.0.0.0:${new URL(api.url).port}"\n`);
      const run = await runCommand(['--account', ACCOUNT, '--config', file, '--dry-run'], { env });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, new RegExp(`at http://127\\.0\\.0\\.1:${new URL(api.url).port}/client/v4`));
      assert.ok(api.requests.length > 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('usage errors exit 2 and say what is wrong', async () => {
    const noToken = await runCommand(['--account', ACCOUNT, '--api-url', 'http://127.0.0.1:1/client/v4', '--yes']);
    assert.equal(noToken.code, 2);
    assert.match(noToken.stderr, /no API token: set CLOUDFLARE_API_TOKEN/);
    const badAccount = await runCommand(['--account', 'abc', '--yes'], { env });
    assert.equal(badAccount.code, 2);
    assert.match(badAccount.stderr, /--account: "abc" is not an account id/);
    const badPage = await runCommand(['--account', ACCOUNT, '--per-page', '0', '--yes'], { env });
    assert.equal(badPage.code, 2);
    assert.match(badPage.stderr, /--per-page/);
  });
});
