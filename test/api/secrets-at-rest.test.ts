/**
 * SPEC §16 "Secrets at rest", end to end on the backend of the run (SQLite, or PostgreSQL):
 * - origin credentials (userinfo, a keyed path, a query value, a secret header — from the config file and
 *   from the API), a monitor's secret header, a webhook's URL secrets and secret, and the SMTP password
 *   are nowhere in the database's bytes (SQLite file and WAL read while serve runs; a pg_dump), while the
 *   gateway and the monitors reach a real origin that checks every credential, webhooks are signed with
 *   the secret and mail goes out through the SMTP server that checks its password;
 * - a wrong, missing or malformed key stops the start with an error naming the file or variable, and
 *   changes nothing;
 * - `switchyard secrets rotate` (the CLI, while serve runs) re-seals everything under a new key: the
 *   running serve keeps reading and writing, the old key no longer starts, the new one does.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createToken } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/clock.js';
import { buildConfig } from '../../src/config/load.js';
import { isSwitchyardError } from '../../src/errors/base.js';
import { getMonitor } from '../../src/health/monitor-queries.js';
import type { Switchyard } from '../../src/main.js';
import { getDestinationTarget } from '../../src/notifications/queries/destinations.js';
import { getPool } from '../../src/pools/pool-queries.js';
import { formatKey, generateKey, keyIdOf, sealedKeyId } from '../../src/store/secret-box.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startOnStore } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { rpc } from '../helpers/http.js';
import { type KeyedOrigin, startKeyedOrigin } from '../helpers/keyed-origin.js';
import { type TestStoreLocation, testStoreLocation } from '../helpers/store.js';
import { secretsIn, storeImage } from '../helpers/store-bytes.js';
import {
  type Receiver,
  type SmtpSink,
  signedWith,
  startReceiver,
  startSmtp,
  waitFor,
} from '../notifications/helpers.js';

const USER = 'origin-user-7f3a';
const PASS = 'origin-Pa55-9q';
const PATH_KEY = 'c0ffee00c0ffee00c0ffee00c0ffee00';
const QUERY_KEY = 'qk-origin-4471';
const HEADER_VALUE = 'hdr-origin-8812';
const MONITOR_TOKEN = 'mon-tok-5531';
const HOOK_PASS = 'hook-Pw-3091';
const HOOK_KEY = 'a1b2c3d4a1b2c3d4a1b2c3d4a1b2c3d4';
const HOOK_TOKEN = 'hook-tok-7702';
const HOOK_SECRET = 'whsec-at-rest-9921';
const SMTP_PASS = 'smtp-Pa55-6620';
const PATH = `/v3/${PATH_KEY}?apikey=${QUERY_KEY}`;
const SECRETS = [
  PASS,
  PATH_KEY,
  QUERY_KEY,
  HEADER_VALUE,
  MONITOR_TOKEN,
  HOOK_PASS,
  HOOK_KEY,
  HOOK_TOKEN,
  HOOK_SECRET,
  SMTP_PASS,
  Buffer.from(`${USER}:${PASS}`).toString('base64'),
];
const MONITOR = { type: 'jsonrpc', interval: 1, timeout: 2, retries: 0, consecutive_down: 1, consecutive_up: 1 };

describe('secrets at rest', () => {
  let anvil: AnvilNode;
  let origin: KeyedOrigin;
  let receiver: Receiver;
  let smtp: SmtpSink;
  let location: TestStoreLocation;
  let app: Switchyard | undefined;
  let token = '';
  const ids = { keyed: '', api: '', hook: '', monitor: '' };
  const keyFile = () => join(location.data_dir, 'secrets.key');
  const hookUrl = () => `http://hook-user:${HOOK_PASS}@127.0.0.1:${receiver.port}/hook/${HOOK_KEY}?token=${HOOK_TOKEN}`;

  /** Starts serve on the test's store; `raw` adds config keys, `env` is all the environment it sees. */
  const boot = (raw: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): Promise<Switchyard> =>
    startOnStore(
      location,
      {
        smtp_url: smtp.url,
        networks: { sepolia: { chain_id: 11_155_111, pools: ['keyed'] } },
        pools: [
          {
            name: 'keyed',
            origins: [{ name: 'node', address: origin.address, header: { 'X-Api-Key': [HEADER_VALUE] } }],
            monitor: { ...MONITOR, header: { 'X-Probe-Token': [MONITOR_TOKEN] } },
          },
        ],
        ...raw,
      },
      env,
    );
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${app?.apiUrl}/accounts/${accountId()}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, result: (JSON.parse(text) as { result: unknown }).result };
  };
  const accountId = () => buildConfig({}, '(defaults)').account_id;
  const rpcUrl = () => `${app?.gatewayUrl}/v1/sepolia`;
  /** Fails when the key does not start serve; returns the start error. */
  const refused = async (raw: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => {
    let started: Switchyard | undefined;
    try {
      started = await boot(raw, env);
    } catch (err) {
      assert.ok(isSwitchyardError(err) && err.code === 'CONFIG_SECRETS_KEY', String(err));
      return err.message;
    }
    await started.close();
    assert.fail('serve started with a key that is not the store’s');
  };
  before(async () => {
    anvil = await startTestAnvil();
    origin = await startKeyedOrigin(anvil.url, {
      user: USER,
      pass: PASS,
      path: PATH,
      header: ['x-api-key', HEADER_VALUE],
    });
    receiver = await startReceiver(`/hook/${HOOK_KEY}`);
    smtp = await startSmtp('mailer-x', SMTP_PASS);
    location = await testStoreLocation();
  });
  after(async () => {
    await app?.close();
    await smtp?.close();
    await receiver?.close();
    await origin?.close();
    await anvil?.stop();
    location?.cleanup();
  });

  it('seals every secret; the gateway, probes, webhooks and mail still use the real ones', async () => {
    app = await boot();
    assert.equal(statSync(keyFile()).mode & 0o777, 0o600, 'the key file is created 0600');
    assert.match(readFileSync(keyFile(), 'utf8'), /^[0-9a-f]{64}\n$/);
    token = (await createToken(app.store.db, systemClock, { accountId: accountId(), readOnly: false })).token;
    const pools = (await api('GET', '/load_balancers/pools')).result as { id: string; name: string }[];
    ids.keyed = pools.find((pool) => pool.name === 'keyed')?.id ?? '';
    const hook = await api('POST', '/alerting/v3/destinations/webhooks', {
      name: 'ops',
      url: hookUrl(),
      secret: HOOK_SECRET,
    });
    assert.equal(hook.status, 201, hook.text);
    ids.hook = (hook.result as { id: string }).id;
    const monitor = await api('POST', '/load_balancers/monitors', {
      ...MONITOR,
      header: { 'X-Probe-Token': [MONITOR_TOKEN] },
    });
    ids.monitor = (monitor.result as { id: string }).id;
    const created = await api('POST', '/load_balancers/pools', {
      name: 'api-keyed',
      monitor: ids.monitor,
      origins: [{ name: 'node', address: origin.address, header: { 'X-Api-Key': [HEADER_VALUE] } }],
    });
    assert.equal(created.status, 200, created.text);
    ids.api = (created.result as { id: string }).id;
    const policy = await api('POST', '/alerting/v3/policies', {
      name: 'all health',
      alert_type: 'load_balancing_health_alert',
      enabled: true,
      mechanisms: { webhooks: [{ id: ids.hook }], email: [{ id: 'ops@example.com' }] },
    });
    assert.equal(policy.status, 200, policy.text);

    for (const id of [ids.keyed, ids.api]) {
      await waitFor(
        async () => (await api('GET', `/load_balancers/pools/${id}/health`)).text.includes('No failures'),
        `${id} checked`,
        20_000,
      );
    }
    assert.equal((await rpc(rpcUrl(), 'eth_chainId')).answer.result, '0xaa36a7');
    assert.ok(origin.seen.length >= 3);
    for (const request of origin.seen) {
      assert.deepEqual(request, { url: PATH, authorization: origin.basic, method: 'POST', header: HEADER_VALUE });
    }

    // A health change: a webhook signed with the secret, and a mail through the password-checking server.
    origin.state.broken = true;
    const start = await waitFor(
      () => receiver.requests.find((r) => r.body.includes('ALERT_STATE_EVENT_START')),
      'the webhook alert',
      20_000,
    );
    assert.ok(signedWith(HOOK_SECRET, start), 'signed with the stored secret');
    await waitFor(() => smtp.messages.length > 0, 'the alert mail', 20_000);
    assert.ok(smtp.logins.includes('mailer-x'));
    origin.state.broken = false;
    // Healthy again before the store is left to the next test: a serve that starts on it begins from the
    // health it holds, and would answer 503 until its first probe.
    for (const id of [ids.keyed, ids.api]) {
      await waitFor(
        async () =>
          ((await api('GET', `/load_balancers/pools/${id}`)).result as { healthy?: boolean }).healthy === true,
        `${id} healthy again`,
        20_000,
      );
    }

    const image = storeImage(location);
    assert.deepEqual(secretsIn(image, SECRETS), [], 'no secret’s bytes in the database');
    // The bytes searched do hold the store's rows (and, on SQLite, its write-ahead log).
    assert.ok(secretsIn(image, ['api-keyed', 'X-Probe-Token']).length >= 2, 'the search sees the rows');
    if (location.backend === 'sqlite')
      assert.ok(image.parts.some((part) => part.name === 'switchyard.db-wal' && part.bytes.length > 0));
    const shown = await api('GET', `/load_balancers/pools/${ids.api}`);
    assert.match(shown.text, /"address":"http:\/\/\*\*\*:\*\*\*@127\.0\.0\.1:\d+\/v3\/\*\*\*\?apikey=\*\*\*"/);
    const pool = await getPool(app.store.db, app.secrets, accountId(), ids.api);
    assert.equal(pool?.origins[0]?.address, origin.address);
    assert.deepEqual(pool?.origins[0]?.header, { 'X-Api-Key': [HEADER_VALUE] });
    assert.deepEqual((await getMonitor(app.store.db, app.secrets, accountId(), ids.monitor))?.header, {
      'X-Probe-Token': [MONITOR_TOKEN],
    });
    const target = await getDestinationTarget(app.store.db, app.secrets, ids.hook);
    assert.deepEqual({ url: target?.url, secret: target?.secret }, { url: hookUrl(), secret: HOOK_SECRET });
  });

  it('a wrong, missing or malformed key stops the start, naming the file or variable, and changes nothing', async () => {
    const keyId = app?.secrets.keyId as string;
    await app?.close();
    app = undefined;
    const other = formatKey(generateKey());
    const otherId = keyIdOf(Buffer.from(other.trim(), 'hex'));
    const fromEnv = await refused({}, { SWITCHYARD_SECRETS_KEY: other });
    assert.match(
      fromEnv,
      /^SWITCHYARD_SECRETS_KEY holds key [0-9a-f]{16}, but this store's secrets are sealed with key/,
    );
    assert.ok(fromEnv.includes(keyId) && fromEnv.includes(otherId), fromEnv);
    assert.match(await refused({}, { SWITCHYARD_SECRETS_KEY: '' }), /SWITCHYARD_SECRETS_KEY is empty/);

    const otherFile = join(location.data_dir, 'other.key');
    writeFileSync(otherFile, other, { mode: 0o600 });
    const wrong = await refused({ secrets_key_file: otherFile });
    assert.ok(wrong.startsWith(`the key file ${otherFile} holds key ${otherId}`), wrong);
    const badFile = join(location.data_dir, 'bad.key');
    writeFileSync(badFile, 'not a key\n', { mode: 0o600 });
    assert.match(
      await refused({ secrets_key_file: badFile }),
      new RegExp(`secrets key file ${badFile} is not a 32-byte key`),
    );

    renameSync(keyFile(), `${keyFile()}.aside`);
    try {
      const missing = await refused({});
      assert.ok(missing.startsWith(`the secrets key file ${keyFile()} does not exist`), missing);
      assert.ok(missing.includes(keyId));
      assert.equal(existsSync(keyFile()), false, 'no new key was made in its place');
    } finally {
      renameSync(`${keyFile()}.aside`, keyFile());
    }
  });

  it('secrets rotate re-seals everything while serve runs; serve keeps working, the old key stops', async () => {
    app = await boot();
    const before = app.secrets.keyId;
    const oldKey = join(location.data_dir, 'old.key');
    copyFileSync(keyFile(), oldKey);
    const configFile = join(location.data_dir, 'rotate.yaml');
    writeFileSync(
      configFile,
      `data_dir: ${JSON.stringify(location.data_dir)}\n${location.database_url === undefined ? '' : `database_url: ${JSON.stringify(location.database_url)}\n`}`,
    );
    const rotated = await runCli(['secrets', 'rotate', '--config', configFile], {
      env: { SWITCHYARD_SECRETS_KEY: undefined },
    });
    assert.equal(rotated.code, 0, rotated.stderr);
    const after = keyIdOf(Buffer.from(readFileSync(keyFile(), 'utf8').trim(), 'hex'));
    assert.notEqual(after, before);
    assert.match(rotated.stdout, new RegExp(`^secrets re-encrypted under key ${after} \\(was ${before}\\)`));
    assert.equal(existsSync(`${keyFile()}.new`), false);
    const pools = await app.store.db.selectFrom('pools').select('settings').execute();
    const sealed = [
      ...pools.map((row) => (JSON.parse(row.settings) as { sealed?: string }).sealed),
      (await app.store.db.selectFrom('webhook_destinations').select('sealed').executeTakeFirstOrThrow()).sealed,
    ].filter((value) => value !== undefined && value !== null);
    assert.ok(sealed.length >= 3);
    for (const value of sealed)
      assert.equal(sealedKeyId(value as string), after, 'every value sealed with the new key');

    // The running serve re-reads its key file when it meets the new key: reads and writes go on.
    const renamed = await api('PATCH', `/load_balancers/pools/${ids.api}`, { description: 'after rotation' });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal((await getPool(app.store.db, app.secrets, accountId(), ids.api))?.origins[0]?.address, origin.address);
    const chainId = await rpc(rpcUrl(), 'eth_chainId');
    assert.equal(chainId.answer.result, '0xaa36a7', JSON.stringify(chainId.answer));
    const tested = await api('POST', `/alerting/v3/destinations/webhooks/${ids.hook}/test`);
    assert.equal(tested.status, 200, tested.text);
    const last = receiver.requests.at(-1);
    assert.ok(last && signedWith(HOOK_SECRET, last), 'the webhook secret survived the rotation');
    assert.deepEqual(secretsIn(storeImage(location), SECRETS), []);
    await app.close();
    app = undefined;

    const old = await refused({ secrets_key_file: oldKey });
    assert.ok(old.includes(before) && old.includes(after), old);
    app = await boot();
    assert.equal(app.secrets.keyId, after);
    const target = await getDestinationTarget(app.store.db, app.secrets, ids.hook);
    assert.deepEqual({ url: target?.url, secret: target?.secret }, { url: hookUrl(), secret: HOOK_SECRET });
  });
});
