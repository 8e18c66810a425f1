/**
 * `switchyard config diff` and `config apply` on a store whose secrets are sealed (SPEC §15, §16), on the
 * backend of the run: they open the key as `serve` does (the key file serve created in data_dir;
 * SWITCHYARD_SECRETS_KEY when set), compare the stored values opened — an unchanged file is no
 * difference, a secret changed only inside its mask is one, shown masked — and write what they apply
 * sealed. A key that is not the store's, or a missing key file, is exit 2 naming the variable or the
 * file, and nothing is changed.
 */
import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { systemClock } from '../../src/clock.js';
import { buildConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { findPoolByName } from '../../src/pools/pool-queries.js';
import { openSecrets } from '../../src/secrets/open.js';
import { openStore } from '../../src/store/database.js';
import { formatKey, generateKey } from '../../src/store/secret-box.js';
import { startOnStore } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { startHttpServer, type TestServer } from '../helpers/http.js';
import { type TestStoreLocation, testStoreLocation } from '../helpers/store.js';
import { secretsIn, storeImage } from '../helpers/store-bytes.js';

const QUERY_1 = 'qk-diff-1187';
const QUERY_2 = 'qk-diff-2294';
const HEADER_1 = 'hdr-diff-3301';
const HEADER_2 = 'hdr-diff-4408';
const PROBE_1 = 'probe-diff-5515';
const PROBE_2 = 'probe-diff-6622';
const SECRETS = [QUERY_1, QUERY_2, HEADER_1, HEADER_2, PROBE_1, PROBE_2];
const ACCOUNT = buildConfig({}, '(defaults)').account_id;

describe('config diff and apply on sealed secrets', () => {
  let location: TestStoreLocation;
  let origin: TestServer;
  let configFile = '';

  const storeKeys = () => ({
    data_dir: location.data_dir,
    ...(location.database_url === undefined ? {} : { database_url: location.database_url }),
  });
  /** The file's pool `main`, with these secrets in its origin's query and header and its monitor's header. */
  const declared = (query: string, header: string, probe: string) => ({
    networks: { sepolia: { chain_id: 11_155_111, pools: ['main'] } },
    pools: [
      {
        name: 'main',
        origins: [{ name: 'a', address: `${origin.url}/rpc?apikey=${query}`, header: { 'X-Api-Key': [header] } }],
        monitor: { type: 'http', path: '/', interval: 60, header: { 'X-Probe-Token': [probe] } },
      },
    ],
  });
  const writeConfig = (query: string, header: string, probe: string) =>
    writeFileSync(configFile, stringify({ ...storeKeys(), ...declared(query, header, probe) }));
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    runCli([...args, '--config', configFile], { env: { SWITCHYARD_SECRETS_KEY: undefined, ...env } });
  /** The stored pool `main`'s origin and monitor as the store's key opens them. */
  const stored = async () => {
    const store = await openStore(storeKeys());
    try {
      const logger = createLogger({ level: 'silent' });
      const secrets = await openSecrets({ store, config: storeKeys(), env: {}, clock: systemClock, logger });
      const pool = await findPoolByName(store.db, secrets, ACCOUNT, 'main');
      const row = await store.db.selectFrom('monitors').select('settings').executeTakeFirstOrThrow();
      return { origin: pool?.origins[0], monitorRow: row.settings };
    } finally {
      await store.close();
    }
  };

  before(async () => {
    location = await testStoreLocation();
    origin = await startHttpServer((_req, res) => {
      res.end('ok');
    });
    configFile = join(location.data_dir, 'switchyard.yaml');
    // serve seeds the pool from the file, creating the key file and sealing the pool's and monitor's secrets.
    const app = await startOnStore(location, declared(QUERY_1, HEADER_1, PROBE_1));
    await app.close();
    writeConfig(QUERY_1, HEADER_1, PROBE_1);
  });
  after(async () => {
    await origin?.close();
    location?.cleanup();
  });

  it('an unchanged file is no difference: the stored secrets are compared opened, with the key serve created', async () => {
    assert.deepEqual(secretsIn(storeImage(location), SECRETS), [], 'the seeded secrets are sealed');
    const same = await cli(['config', 'diff']);
    assert.equal(same.code, 0, same.stderr);
    assert.equal(same.stdout, '');
    const again = await cli(['config', 'apply']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /0 created, 0 updated, 1 unchanged/);
  });

  it('a secret changed inside its mask is a difference, shown masked; apply writes it sealed', async () => {
    writeConfig(QUERY_2, HEADER_2, PROBE_2);
    const diff = await cli(['config', 'diff']);
    assert.equal(diff.code, 1, diff.stderr);
    const lines = diff.stdout.split('\n');
    assert.ok(lines.includes('~ main:'), diff.stdout);
    for (const field of ['origins.a.address', 'origins.a.header', 'monitor.header']) {
      assert.ok(
        lines.some((line) => line.startsWith(`    ${field}: `) && line.endsWith('(a masked part differs)')),
        `${field} differs inside its mask:\n${diff.stdout}`,
      );
    }
    assert.deepEqual(
      SECRETS.filter((secret) => diff.stdout.includes(secret) || diff.stderr.includes(secret)),
      [],
    );

    const apply = await cli(['config', 'apply']);
    assert.equal(apply.code, 0, apply.stderr);
    assert.equal(apply.stdout.trim(), 'updated main');
    const now = await stored();
    assert.equal(now.origin?.address, `${origin.url}/rpc?apikey=${QUERY_2}`);
    assert.deepEqual(now.origin?.header, { 'X-Api-Key': [HEADER_2] });
    assert.ok(!now.monitorRow.includes(PROBE_2) && !now.monitorRow.includes(PROBE_1), now.monitorRow);
    assert.deepEqual(secretsIn(storeImage(location), [QUERY_2, HEADER_2, PROBE_2]), [], 'applied secrets are sealed');
    const after = await cli(['config', 'diff']);
    assert.equal(after.code, 0, after.stdout);
  });

  it("a key that is not the store's, or a missing key file, is exit 2 naming it, and nothing changes", async () => {
    writeConfig(QUERY_1, HEADER_1, PROBE_1);
    const other = formatKey(generateKey());
    for (const sub of ['diff', 'apply']) {
      const wrong = await cli(['config', sub], { SWITCHYARD_SECRETS_KEY: other });
      assert.equal(wrong.code, 2, wrong.stderr);
      assert.match(wrong.stderr, /SWITCHYARD_SECRETS_KEY holds key \w+, but this store's secrets are sealed with key/);
    }
    const keyFile = join(location.data_dir, 'secrets.key');
    renameSync(keyFile, `${keyFile}.away`);
    try {
      const missing = await cli(['config', 'apply']);
      assert.equal(missing.code, 2, missing.stderr);
      assert.ok(missing.stderr.includes(`the secrets key file ${keyFile} does not exist`), missing.stderr);
    } finally {
      renameSync(`${keyFile}.away`, keyFile);
    }
    const unchanged = await stored();
    assert.equal(unchanged.origin?.address, `${origin.url}/rpc?apikey=${QUERY_2}`, 'no apply went through');
  });
});
