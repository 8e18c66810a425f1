/**
 * Upgrading a store the previous release wrote (the schema before `010_secrets_at_rest`, every secret in
 * the clear: test/helpers/previous-release.ts): the first start of this version seals everything and
 * loses nothing.
 * Afterwards no secret's bytes are in the database (SQLite file and WAL; a pg_dump) — though they were
 * before —, the health state an origin had is kept (now keyed by the masked address), the pool's version
 * is unchanged (nothing re-routed), and the gateway, the monitor and the webhook use the same secrets
 * as before: a real origin checks Basic auth, keyed path, query and header; the receiver checks the
 * signature.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createToken } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/clock.js';
import { buildConfig } from '../../src/config/load.js';
import { getMonitor } from '../../src/health/monitor-queries.js';
import type { Switchyard } from '../../src/main.js';
import { getDestinationTarget } from '../../src/notifications/queries/destinations.js';
import { getPool } from '../../src/pools/pool-queries.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startOnStore } from '../helpers/app.js';
import { rpc } from '../helpers/http.js';
import { type KeyedOrigin, startKeyedOrigin } from '../helpers/keyed-origin.js';
import { openPreviousReleaseStore } from '../helpers/previous-release.js';
import { type TestStoreLocation, testStoreLocation } from '../helpers/store.js';
import { secretsIn, storeImage } from '../helpers/store-bytes.js';
import { type Receiver, signedWith, startReceiver, waitFor } from '../notifications/helpers.js';

const ACCOUNT = buildConfig({}, '(defaults)').account_id;
const PASS = 'legacy-Pa55-4410';
const PATH_KEY = '0ddba11c0ddba11c0ddba11c0ddba11c';
const QUERY_KEY = 'qk-legacy-2207';
const HEADER_VALUE = 'hdr-legacy-6193';
const MONITOR_TOKEN = 'mon-legacy-3358';
const HOOK_KEY = 'beadfacebeadfacebeadfacebeadface';
const HOOK_SECRET = 'whsec-legacy-8846';
const PATH = `/v3/${PATH_KEY}?apikey=${QUERY_KEY}`;
const SECRETS = [PASS, PATH_KEY, QUERY_KEY, HEADER_VALUE, MONITOR_TOKEN, HOOK_KEY, HOOK_SECRET];
const NOW = '2026-02-01T00:00:00.000Z';

describe('upgrading a store written by the previous release', () => {
  let anvil: AnvilNode;
  let origin: KeyedOrigin;
  let receiver: Receiver;
  let location: TestStoreLocation;
  let app: Switchyard | undefined;
  const ids = { pool: randomUUID().replaceAll('-', ''), monitor: randomUUID().replaceAll('-', ''), hook: randomUUID() };
  const hookUrl = () => `http://127.0.0.1:${receiver.port}/hook/${HOOK_KEY}`;

  /** The rows as the previous release wrote them (its fieldsToColumns, createMonitor, insertDestination). */
  const writePreviousRelease = async () => {
    const db = await openPreviousReleaseStore(location);
    try {
      await db.insertInto('accounts').values({ id: ACCOUNT, name: 'default', created_on: NOW }).execute();
      const monitor = { type: 'jsonrpc', interval: 1, timeout: 2, retries: 0, consecutive_down: 1, consecutive_up: 1 };
      await db
        .insertInto('monitors')
        .values({
          id: ids.monitor,
          account_id: ACCOUNT,
          settings: JSON.stringify({ ...monitor, header: { 'X-Probe-Token': [MONITOR_TOKEN] } }),
          created_on: NOW,
          modified_on: NOW,
        })
        .execute();
      const node = { name: 'node', address: origin.address, enabled: true, weight: 1, archive: false };
      const settings = {
        description: 'written by 0.1',
        minimum_origins: 1,
        notification_filter: null,
        origins: [{ ...node, header: { 'X-Api-Key': [HEADER_VALUE] } }],
        origin_steering: { policy: 'random' },
        check_regions: null,
      };
      await db
        .insertInto('pools')
        .values({
          id: ids.pool,
          account_id: ACCOUNT,
          name: 'keyed',
          notification_email: '',
          monitor_id: ids.monitor,
          enabled: 1,
          settings: JSON.stringify(settings),
          created_on: NOW,
          modified_on: NOW,
          version: 1,
        })
        .execute();
      await db
        .insertInto('webhook_destinations')
        .values({
          id: ids.hook,
          account_id: ACCOUNT,
          name: 'ops',
          url: hookUrl(),
          secret: HOOK_SECRET,
          type: 'generic',
          created_at: NOW,
          last_success: NOW,
          last_failure: null,
        })
        .execute();
      await db
        .insertInto('origin_health')
        .values({
          pool_id: ids.pool,
          origin_name: 'node',
          origin_address: origin.address,
          status: 'Healthy',
          failures: 0,
          successes: 40,
          last_ok: 1,
          failure_reason: '',
          response_code: 200,
          rtt_ms: 3,
          checked_at: NOW,
          changed_at: NOW,
          generation: 40,
        })
        .execute();
    } finally {
      await db.destroy();
    }
  };

  before(async () => {
    anvil = await startTestAnvil();
    origin = await startKeyedOrigin(anvil.url, {
      user: 'legacy-user',
      pass: PASS,
      path: PATH,
      header: ['x-api-key', HEADER_VALUE],
    });
    receiver = await startReceiver(`/hook/${HOOK_KEY}`);
    location = await testStoreLocation();
    await writePreviousRelease();
  });
  after(async () => {
    await app?.close();
    await receiver?.close();
    await origin?.close();
    await anvil?.stop();
    location?.cleanup();
  });

  it('the first start seals every secret in place; nothing is lost', async () => {
    const found = secretsIn(storeImage(location), SECRETS);
    assert.equal(found.length, SECRETS.length, `the previous release stored them in the clear: ${found}`);

    app = await startOnStore(location, { networks: { sepolia: { chain_id: 11_155_111, pools: ['keyed'] } } });
    assert.equal(statSync(`${location.data_dir}/secrets.key`).mode & 0o777, 0o600, 'a key file was made');
    assert.deepEqual(secretsIn(storeImage(location), SECRETS), [], 'no secret’s bytes left in the database');

    const pool = await getPool(app.store.db, app.secrets, ACCOUNT, ids.pool);
    assert.deepEqual(pool?.origins[0], {
      name: 'node',
      address: origin.address,
      enabled: true,
      weight: 1,
      archive: false,
      header: { 'X-Api-Key': [HEADER_VALUE] },
    });
    assert.equal(pool?.description, 'written by 0.1');
    const row = await app.store.db.selectFrom('pools').select('version').where('id', '=', ids.pool).executeTakeFirst();
    assert.equal(Number(row?.version), 1, 'sealing is not a change of the pool');
    const monitor = await getMonitor(app.store.db, app.secrets, ACCOUNT, ids.monitor);
    assert.deepEqual(monitor?.header, { 'X-Probe-Token': [MONITOR_TOKEN] });
    assert.equal(monitor?.interval, 1);
    const target = await getDestinationTarget(app.store.db, app.secrets, ids.hook);
    assert.deepEqual(target, { account_id: ACCOUNT, url: hookUrl(), secret: HOOK_SECRET });

    // The health state carried over (not restarted from Unknown): only the stored address is masked.
    const state = await app.store.db.selectFrom('origin_health').selectAll().executeTakeFirstOrThrow();
    assert.equal(state.origin_address, `http://***:***@127.0.0.1:${origin.port}/v3/***?apikey=***`);
    assert.ok(Number(state.generation) >= 40, `generation ${state.generation}`);

    // The same requests as before: probes and the gateway send every credential.
    const seenBefore = origin.seen.length;
    assert.equal((await rpc(`${app.gatewayUrl}/v1/sepolia`, 'eth_chainId')).answer.result, '0xaa36a7');
    await waitFor(() => origin.seen.length >= seenBefore + 3, 'probes and calls at the origin', 20_000);
    for (const request of origin.seen) {
      assert.deepEqual(request, { url: PATH, authorization: origin.basic, method: 'POST', header: HEADER_VALUE });
    }
    const token = (await createToken(app.store.db, systemClock, { accountId: ACCOUNT, readOnly: false })).token;
    const tested = await fetch(`${app.apiUrl}/accounts/${ACCOUNT}/alerting/v3/destinations/webhooks/${ids.hook}/test`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(tested.status, 200, await tested.text());
    const sent = receiver.requests.at(-1);
    assert.ok(sent);
    assert.ok(signedWith(HOOK_SECRET, sent), 'signed with the secret the previous release stored');
  });
});
