// Restart keeps everything (on whichever backend the run selects): accounts, tokens, monitors, pools
// and API changes to config-declared pools, which are created once and never overwritten.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Cloudflare from 'cloudflare';
import { findAccount } from '../../src/accounts/accounts.js';
import { createToken } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/clock.js';
import { buildConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { type Switchyard, startSwitchyard } from '../../src/main.js';
import { getPool } from '../../src/pools/pool-queries.js';
import { testStoreLocation } from '../helpers/store.js';

const ACCOUNT = 'c0ffee00c0ffee00c0ffee00c0ffee00';

test('a restart keeps accounts, tokens, monitors, pools and API changes to config pools', async () => {
  const location = await testStoreLocation();
  const config = buildConfig(
    {
      data_dir: location.data_dir,
      ...(location.database_url ? { database_url: location.database_url } : {}),
      gateway: { listen: '127.0.0.1:0' },
      api: { listen: '127.0.0.1:0' },
      log_level: 'silent',
      account_id: ACCOUNT,
      networks: { main: { chain_id: 1, pools: ['cfg-pool'] } },
      pools: [
        {
          name: 'cfg-pool',
          origins: [{ name: 'a', address: 'http://127.0.0.1:9' }],
          notification_email: 'ops@example.com',
          monitor: { type: 'jsonrpc', interval: 5, timeout: 2, consecutive_down: 2 },
        },
      ],
    },
    '(restart test)',
  );
  const start = () => startSwitchyard({ config, logger: silentLogger });
  let app: Switchyard | undefined = await start();
  try {
    assert.ok(await findAccount(app.store.db, ACCOUNT), 'account_id is created on start');
    const { token } = await createToken(app.store.db, systemClock, { accountId: ACCOUNT, readOnly: false });
    let sdk = new Cloudflare({ apiToken: token, baseURL: app.apiUrl, maxRetries: 0 });
    const account_id = ACCOUNT;

    const [seeded] = (await sdk.loadBalancers.pools.list({ account_id })).result;
    assert.equal(seeded?.name, 'cfg-pool');
    assert.deepEqual(seeded?.networks, ['main']);
    assert.equal(seeded?.notification_email, 'ops@example.com');
    const monitor = await sdk.loadBalancers.monitors.get(seeded?.monitor as string, { account_id });
    assert.equal(monitor.type as string, 'jsonrpc');
    assert.equal(monitor.interval, 5);
    assert.equal(monitor.consecutive_down, 2);

    await assert.rejects(sdk.loadBalancers.pools.delete(seeded?.id as string, { account_id }), (err: unknown) => {
      assert.ok(err instanceof Cloudflare.BadRequestError);
      assert.match((err.errors as { message: string }[])[0]?.message ?? '', /network "main"/);
      return true;
    });
    await assert.rejects(
      sdk.loadBalancers.pools.edit(seeded?.id as string, { account_id, name: 'renamed' }),
      (err: unknown) =>
        err instanceof Cloudflare.BadRequestError && /network \\"main\\"/.test(JSON.stringify(err.errors)),
      'a pool a network routes to cannot be renamed',
    );
    await sdk.loadBalancers.pools.edit(seeded?.id as string, {
      account_id,
      description: 'changed',
      notification_email: '',
    });
    const extra = await sdk.loadBalancers.pools.create({
      account_id,
      name: 'api-pool',
      origins: [{ name: 'b', address: 'https://user:secret@rpc.example/v3/0123456789abcdef0123456789abcdef' }],
    });
    assert.equal(extra.origins?.[0]?.address, 'https://***:***@rpc.example/v3/***', 'secrets never come back');
    const before = await sdk.loadBalancers.pools.list({ account_id });
    const monitorsBefore = await sdk.loadBalancers.monitors.list({ account_id });

    await app.close();
    app = undefined;
    app = await start();
    sdk = new Cloudflare({ apiToken: token, baseURL: app.apiUrl, maxRetries: 0 });

    const afterList = await sdk.loadBalancers.pools.list({ account_id });
    const strip = (pools: typeof before.result) =>
      pools.map((pool) => ({ ...pool, healthy: undefined }) as Record<string, unknown>);
    assert.deepEqual(strip(afterList.result), strip(before.result), 'pools survive; config did not overwrite');
    assert.equal(afterList.result.find((p) => p.name === 'cfg-pool')?.description, 'changed');
    assert.equal(afterList.result.find((p) => p.name === 'cfg-pool')?.notification_email, '');
    const monitorsAfter = await sdk.loadBalancers.monitors.list({ account_id });
    assert.deepEqual(monitorsAfter.result, monitorsBefore.result, 'no second monitor from the config');

    // Masked secrets round-trip: GET, change the weight, PUT back; the stored address is kept.
    const got = await sdk.loadBalancers.pools.get(extra.id as string, { account_id });
    const origins = (got.origins ?? []).map((o) => ({ name: o.name, address: o.address, weight: 0.5 }));
    const put = await sdk.loadBalancers.pools.update(extra.id as string, { account_id, name: 'api-pool', origins });
    assert.equal(put.origins?.[0]?.weight, 0.5);
    const stored = await getPool(app.store.db, app.secrets, account_id, extra.id as string);
    assert.equal(stored?.origins[0]?.address, 'https://user:secret@rpc.example/v3/0123456789abcdef0123456789abcdef');
    await assert.rejects(
      sdk.loadBalancers.pools.edit(extra.id as string, {
        account_id,
        origins: [{ name: 'other-name', address: 'https://***:***@rpc.example/v3/***' }],
      }),
      Cloudflare.BadRequestError,
    );
  } finally {
    await app?.close();
    location.cleanup();
  }
});
