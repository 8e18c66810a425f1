/**
 * Migration 005 (origin addresses): rows written by older versions — a bare address carrying userinfo,
 * a path or a query, URLs in non-canonical spellings — are rewritten to the canonical address that sends
 * the very request the old gateway sent; their health state follows; secrets older versions recorded
 * unmasked in events, queued payloads and history are masked. A row that cannot be mapped stops the start
 * with a message naming the pool and origin, and nothing changes. The migration is re-run on a store
 * holding old rows, in a transaction as the migrator runs it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { originTarget } from '../../src/model/origin-address.js';
import type { Store } from '../../src/store/database.js';
import { canonicalFromLegacy, originAddressesMigration } from '../../src/store/migrations/005_origin_addresses.js';
import { openTestStore } from '../helpers/store.js';
import { insertAccount, insertPool } from '../notifications/helpers.js';

const KEY = 'fedcba9876543210fedcba9876543210';
const LEGACY = `apiuser:PASS@127.0.0.1:9/v3/${KEY}?apikey=K`;

/** What the gateway of older versions sent for an address (upstream.ts: http:// prefixed, WHATWG URL). */
function oldRequest(address: string) {
  const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(address) ? address : `http://${address}`);
  const auth =
    url.username !== '' || url.password !== ''
      ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
      : undefined;
  return { host: url.host, path: `${url.pathname}${url.search}`, auth, scheme: url.protocol };
}

/** A pool row as an older version stored it: addresses unchecked. */
function insertLegacyPool(store: Store, accountId: string, name: string, addresses: string[]): Promise<string> {
  return insertPool(store, accountId, { name, addresses });
}

/** Runs migration 005 again, as the migrator does: in one transaction (a failure changes nothing). */
async function rerun(store: Store): Promise<void> {
  const migration = originAddressesMigration(store.dialect);
  await store.db.transaction().execute((trx) => migration.up(trx as unknown as Kysely<unknown>));
}

async function addresses(store: Store, poolId: string): Promise<string[]> {
  const row = await store.db.selectFrom('pools').select('settings').where('id', '=', poolId).executeTakeFirstOrThrow();
  return (JSON.parse(row.settings) as { origins: Array<{ address: string }> }).origins.map((o) => o.address);
}

describe('migration 005: origin addresses', () => {
  let fixture: Awaited<ReturnType<typeof openTestStore>>;
  let store: Store;
  let accountId: string;
  before(async () => {
    fixture = await openTestStore();
    store = fixture.store;
    accountId = await insertAccount(store);
  });
  after(() => fixture.close());

  it('maps each legacy form to the canonical address that sends the same request', () => {
    const table: Array<[string, string]> = [
      [LEGACY, `http://apiuser:PASS@127.0.0.1:9/v3/${KEY}?apikey=K`],
      ['user:pw@node:8545', 'http://user:pw@node:8545/'],
      ['node:8545/rpc', 'http://node:8545/rpc'],
      ['node:8545?k=v', 'http://node:8545/?k=v'],
      ['node/a b', 'http://node/a%20b'],
      ['HTTP://Rpc.Example:80/x#frag', 'http://rpc.example/x'],
      ['127.0.0.1:8545', '127.0.0.1:8545'],
      ['http://127.0.0.1:8545', 'http://127.0.0.1:8545'],
    ];
    for (const [legacy, canonical] of table) {
      assert.equal(canonicalFromLegacy(legacy), canonical, legacy);
      const now = originTarget(canonical);
      const old = oldRequest(legacy);
      assert.deepEqual(
        { host: now.host, path: now.path, auth: now.authorization, scheme: now.scheme },
        old,
        `same request: ${legacy}`,
      );
    }
  });

  it('rewrites stored rows, keeps their health state and masks what older versions recorded unmasked', async () => {
    const poolId = await insertLegacyPool(store, accountId, 'legacy', [LEGACY, '127.0.0.1:8545']);
    const now = new Date().toISOString();
    await store.db
      .insertInto('origin_health')
      .values({
        pool_id: poolId,
        origin_name: 'o0',
        origin_address: LEGACY,
        status: 'Healthy',
        failures: 0,
        successes: 3,
        last_ok: 1,
        failure_reason: '',
        response_code: 200,
        rtt_ms: 3,
        checked_at: now,
        changed_at: now,
        generation: 7,
      })
      .execute();
    const eventId = randomUUID();
    await store.db
      .insertInto('health_events')
      .values({
        id: eventId,
        account_id: accountId,
        event_source: 'origin',
        pool_id: poolId,
        pool_name: 'legacy',
        origin_name: 'o0',
        origin_address: LEGACY,
        previous: 'Healthy',
        new_health: 'Unhealthy',
        reason: 'connection refused',
        occurred_at: now,
      })
      .execute();
    const shownByOldVersions = 'apiuser:PASS@127.0.0.1:9';
    const body = JSON.stringify({ data: { origin_address: shownByOldVersions } });
    await store.db
      .insertInto('notification_history')
      .values({
        id: randomUUID(),
        account_id: accountId,
        delivery_id: randomUUID(),
        policy_id: null,
        name: 'n',
        description: '',
        alert_body: body,
        alert_type: 'load_balancing_health_alert',
        mechanism: 'ops@example.com',
        mechanism_type: 'email',
        sent: now,
      })
      .execute();
    const versionBefore = (
      await store.db.selectFrom('pools').select('version').where('id', '=', poolId).executeTakeFirstOrThrow()
    ).version;

    await rerun(store);

    assert.deepEqual(await addresses(store, poolId), [
      `http://apiuser:PASS@127.0.0.1:9/v3/${KEY}?apikey=K`,
      '127.0.0.1:8545',
    ]);
    const version = (
      await store.db.selectFrom('pools').select('version').where('id', '=', poolId).executeTakeFirstOrThrow()
    ).version;
    assert.equal(Number(version), Number(versionBefore) + 1, 'the directory sees a new version');
    const health = await store.db
      .selectFrom('origin_health')
      .selectAll()
      .where('pool_id', '=', poolId)
      .executeTakeFirstOrThrow();
    assert.equal(health.origin_address, `http://apiuser:PASS@127.0.0.1:9/v3/${KEY}?apikey=K`);
    assert.equal(Number(health.generation), 7);
    const event = await store.db
      .selectFrom('health_events')
      .select('origin_address')
      .where('id', '=', eventId)
      .executeTakeFirstOrThrow();
    assert.equal(event.origin_address, 'http://***:***@127.0.0.1:9/v3/***?apikey=***');
    const history = await store.db
      .selectFrom('notification_history')
      .select('alert_body')
      .where('account_id', '=', accountId)
      .execute();
    for (const row of history) {
      assert.ok(!row.alert_body.includes('PASS'), row.alert_body);
      assert.ok(row.alert_body.includes('***:***@127.0.0.1:9'), row.alert_body);
    }
  });

  it('refuses to start on an address it cannot map, naming the pool and origin, and changes nothing', async () => {
    const poolId = await insertLegacyPool(store, accountId, 'hand-edited', ['http://127.0.0.1:1', 'http://a*b/x']);
    const otherId = await insertLegacyPool(store, accountId, 'other-legacy', ['user:pw@node:8545']);
    await assert.rejects(rerun(store), (err: Error) => {
      assert.match(err.message, /pool "hand-edited" \(id [0-9a-f]{32}, account [0-9a-f]{32}\), origin "o1"/);
      assert.match(err.message, /nothing was changed/);
      return true;
    });
    assert.deepEqual(await addresses(store, poolId), ['http://127.0.0.1:1', 'http://a*b/x']);
    assert.deepEqual(await addresses(store, otherId), ['user:pw@node:8545']);
    await store.db.deleteFrom('pools').where('id', '=', poolId).execute();
    await rerun(store);
    assert.deepEqual(await addresses(store, otherId), ['http://user:pw@node:8545/']);
  });
});
