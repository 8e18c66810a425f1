/**
 * migrate-notifications against a real Switchyard started in-process (pools API + policies API +
 * notification_migration status): 64 pools in several address groups with various notification_filters.
 * One app, five acts: a dry run changes nothing; a run interrupted after its first bulk PATCH (the
 * connection dies under it) leaves every uncovered pool alone; the re-run finishes the job with the right
 * policies and no duplicates, proven through the API; a further re-run writes nothing; a pool added
 * later with a known address extends its group's policy with PUT. Before that, a bad token, another
 * account and a read-only token each stop the command with the server's v4 error and change nothing.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createToken } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/clock.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { testStoreLocation } from '../helpers/store.js';
import { expectedPolicies, fixturePools, POOL_COUNT, policyKey } from './fixture.js';
import { runCommand } from './run-command.js';

let app: TestApp;
let accountId: string;
let token: string;
let cleanup = (): void => {};

interface Envelope {
  success: boolean;
  errors: Array<{ code: number; message: string }>;
  result: unknown;
}

async function call(method: string, path: string, body?: unknown): Promise<Envelope> {
  const response = await fetch(`${app.apiUrl}/accounts/${accountId}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const envelope = (await response.json()) as Envelope;
  assert.equal(envelope.success, true, `${method} ${path}: ${JSON.stringify(envelope.errors)}`);
  return envelope;
}

type Pool = { id: string; name: string; notification_email: string };
type Policy = { id: string; mechanisms: { email?: Array<{ id: string }> }; filters: Record<string, string[]> };

const pools = async (): Promise<Pool[]> => (await call('GET', '/load_balancers/pools?per_page=1000')).result as Pool[];
const policies = async (): Promise<Policy[]> => (await call('GET', '/alerting/v3/policies')).result as Policy[];

before(async () => {
  const location = await testStoreLocation();
  cleanup = location.cleanup;
  app = await startApp(location.database_url ? { database_url: location.database_url } : {});
  accountId = app.config.account_id;
  token = (await createToken(app.store.db, systemClock, { accountId, readOnly: false })).token;
  for (const pool of fixturePools()) {
    await call('POST', '/load_balancers/pools', {
      name: pool.name,
      origins: [{ name: 'o0', address: 'http://127.0.0.1:9/' }],
      notification_email: pool.notification_email,
      notification_filter: pool.notification_filter,
    });
  }
});

after(async () => {
  await app?.close();
  cleanup();
});

test('bad token, wrong account or a read-only token: non-zero exit, the v4 error shown, nothing changed', async () => {
  const args = ['--account', accountId, '--api-url', app.apiUrl, '--yes'];
  const before = await pools();
  const bad = await runCommand(args, { env: { CLOUDFLARE_API_TOKEN: 'not-a-token' } });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /API error 10000: .*\(HTTP 401\)/);
  assert.match(bad.stderr, /Check the token/);
  const other = await runCommand(['--account', 'f'.repeat(32), '--api-url', app.apiUrl, '--yes'], {
    env: { CLOUDFLARE_API_TOKEN: token },
  });
  assert.equal(other.code, 1);
  assert.match(other.stderr, /API error 10000: .*\(HTTP 403\)/);
  const readOnly = (await createToken(app.store.db, systemClock, { accountId, readOnly: true })).token;
  const denied = await runCommand(args, { env: { CLOUDFLARE_API_TOKEN: readOnly } });
  assert.equal(denied.code, 1, denied.stdout);
  assert.match(denied.stderr, /API error 10000: .*\(HTTP 403\) on POST .*\/alerting\/v3\/policies/);
  assert.deepEqual(await pools(), before, 'no pool changed');
  assert.deepEqual(await policies(), [], 'no policy created');
});

test('dry run, interrupted run, completing re-run and idle re-run against the real API', async () => {
  const env = { CLOUDFLARE_API_TOKEN: token };
  const args = ['--account', accountId, '--api-url', app.apiUrl];
  const before = await pools();
  assert.equal(before.length, POOL_COUNT);
  const legacy = before.filter((pool) => pool.notification_email !== '').length;

  // 1. Dry run: the plan, and nothing changes.
  const dry = await runCommand([...args, '--dry-run'], { env });
  assert.equal(dry.code, 0, dry.stderr + dry.stdout);
  assert.match(dry.stdout, /Policies \(5\): 5 to create/);
  assert.deepEqual(await pools(), before);
  assert.deepEqual(await policies(), []);

  // 2. Interrupted: the connection dies on every bulk PATCH after the first one.
  let patches = 0;
  const dying: typeof fetch = async (input, init) => {
    if (init?.method === 'PATCH' && ++patches > 1)
      throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
    return fetch(input, init);
  };
  const cut = await runCommand([...args, '--yes'], { env, fetch: dying });
  assert.equal(cut.code, 1, cut.stdout);
  assert.match(cut.stderr, /cannot reach the API \(PATCH .*\): ECONNRESET/);
  const midway = await pools();
  const cleared = midway.filter((pool) => pool.notification_email === '').length - (POOL_COUNT - legacy);
  assert.ok(cleared > 0 && cleared < legacy, `some pages cleared, not all (${cleared} of ${legacy})`);
  assertCovered(midway, await policies());

  // 3. Re-run: finishes, reusing the policies, and proves it through the API.
  const rerun = await runCommand([...args, '--yes'], { env });
  assert.equal(rerun.code, 0, rerun.stderr + rerun.stdout);
  assert.match(rerun.stdout, /0 to create, 0 to update, 5 already in place/);
  // The summary names what else policies can carry here: the chain-incident alert types (SPEC §14).
  assert.match(
    rerun.stdout,
    /Switchyard: switchyard_head_stall_alert, switchyard_origin_divergence_alert, switchyard_reorg_alert, switchyard_finality_stall_alert, switchyard_origin_integrity_alert/,
  );
  const after = await pools();
  assert.deepEqual(
    after.filter((pool) => pool.notification_email !== ''),
    [],
  );
  const final = await policies();
  const names = new Map(after.map((pool) => [pool.id, pool.name]));
  assert.deepEqual(
    new Map(final.map((p) => [policyKey(p), (p.filters.pool_id ?? []).map((id) => names.get(id)).sort()])),
    expectedPolicies(fixturePools()),
    'one policy per (address set, filter) with exactly its pools',
  );
  const status = (await call('GET', '/load_balancers/notification_migration')).result as Record<string, unknown>;
  assert.equal(status.complete, true);
  assert.equal(status.pools_with_legacy_email, 0);

  // 4. Another re-run writes nothing.
  const idle = await runCommand([...args, '--yes'], { env });
  assert.equal(idle.code, 0, idle.stderr);
  assert.match(idle.stdout, /nothing to do/);
  assert.equal((await policies()).length, 5);

  // 5. A pool added later with a known address extends its group's policy (PUT), still no duplicate.
  const late = (
    await call('POST', '/load_balancers/pools', {
      name: 'pool-100-late',
      origins: [{ name: 'o0', address: 'http://127.0.0.1:9/' }],
      notification_email: 'OPS@example.com',
    })
  ).result as Pool;
  const extend = await runCommand([...args, '--yes'], { env });
  assert.equal(extend.code, 0, extend.stderr + extend.stdout);
  assert.match(extend.stdout, /1 +update +ops@example\.com +origin\+pool → Healthy\+Unhealthy +1 +\S+: add 1 pool/);
  const grown = await policies();
  assert.equal(grown.length, 5);
  const both = grown.find((p) => policyKey(p) === 'ops@example.com|origin,pool|Healthy,Unhealthy');
  assert.ok(both?.filters.pool_id?.includes(late.id));
  assert.equal(both?.filters.pool_id?.length, 25, 'the 24 earlier pools stay covered');
  assert.deepEqual(
    (await pools()).filter((pool) => pool.notification_email !== ''),
    [],
  );
});

/** Every pool whose email was cleared is in a policy with its group's recipients (checked via the fixture). */
function assertCovered(current: Pool[], list: Policy[]): void {
  const fixture = new Map(fixturePools().map((pool) => [pool.name, pool]));
  const expected = expectedPolicies(fixturePools());
  for (const pool of current) {
    const original = fixture.get(pool.name)!;
    if (pool.notification_email !== '' || original.notification_email === '') continue;
    for (const [key, members] of expected) {
      if (!members.includes(pool.name)) continue;
      const policy = list.find((p) => policyKey(p) === key);
      assert.ok(policy?.filters.pool_id?.includes(pool.id), `${pool.name} was cleared but ${key} does not cover it`);
    }
  }
}
