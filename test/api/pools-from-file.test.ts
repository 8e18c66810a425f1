/**
 * `pools_from_file` at serve start-up (SPEC §15), restarting on one store (whichever backend the run
 * selects): under `seed` an API edit of a declared pool survives a restart and serve logs ONE warn line
 * naming the pools that differ and `switchyard config diff`; under `apply` the file's pools are applied at
 * every start (the edit is overwritten) and the API's answer to an edit of such a pool says so in
 * `messages` (code 1100), while an edit of a pool the file does not declare says nothing. The config's
 * warnings (a network naming a pool that exists nowhere) go to the log at warn.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createToken } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/clock.js';
import { buildConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { type Switchyard, startSwitchyard } from '../../src/main.js';
import { testStoreLocation } from '../helpers/store.js';

const ACCOUNT = 'f11ef11ef11ef11ef11ef11ef11ef11e';

interface Envelope {
  success: boolean;
  messages: { code: number; message: string }[];
  result: Record<string, unknown> & { id: string };
}

test('pools_from_file: seed warns of differences once, apply overwrites API edits and says so', async () => {
  const location = await testStoreLocation();
  const file = (mode: 'seed' | 'apply') =>
    buildConfig(
      {
        data_dir: location.data_dir,
        ...(location.database_url ? { database_url: location.database_url } : {}),
        gateway: { listen: '127.0.0.1:0' },
        api: { listen: '127.0.0.1:0' },
        account_id: ACCOUNT,
        pools_from_file: mode,
        networks: { main: { chain_id: 1, pools: ['declared', 'misspelt'] } },
        pools: [
          { name: 'declared', description: 'from the file', origins: [{ name: 'a', address: 'http://127.0.0.1:9' }] },
        ],
      },
      '(pools_from_file test)',
    );
  let lines: Record<string, unknown>[] = [];
  let app: Switchyard | undefined;
  let token = '';
  const start = async (mode: 'seed' | 'apply') => {
    lines = [];
    const logger = createLogger({
      level: 'info',
      write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    app = await startSwitchyard({ config: file(mode), logger });
    token ||= (await createToken(app.store.db, systemClock, { accountId: ACCOUNT, readOnly: false })).token;
  };
  const call = async (method: string, path: string, body?: unknown): Promise<Envelope> => {
    const res = await fetch(`${app?.apiUrl}/accounts/${ACCOUNT}/load_balancers/pools${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await res.json()) as Envelope;
  };
  const declared = async () => (await call('GET', '')).result as unknown as Array<Envelope['result']>;
  const warns = () => lines.filter((line) => line.level === 'warn');
  try {
    await start('seed');
    const [pool] = (await declared()).filter((p) => p.name === 'declared');
    assert.ok(pool);
    const edited = await call('PATCH', `/${pool.id}`, { description: 'edited through the API' });
    assert.equal(edited.success, true);
    assert.deepEqual(edited.messages, [], 'under seed the store wins: nothing to warn of');
    assert.deepEqual(
      warns().map((line) => [line.msg, line.path]),
      [['config warning', 'networks.main.pools.1']],
      'the config warning, and no difference yet',
    );
    await app?.close();

    await start('seed');
    const differ = warns().filter((line) => String(line.msg).includes('switchyard config diff'));
    assert.equal(differ.length, 1, 'one warn line');
    assert.deepEqual(differ[0]?.pools, ['declared']);
    assert.equal((await declared()).find((p) => p.name === 'declared')?.description, 'edited through the API');
    await app?.close();

    await start('apply');
    assert.equal((await declared()).find((p) => p.name === 'declared')?.description, 'from the file');
    assert.ok(!warns().some((line) => String(line.msg).includes('config diff')), 'apply leaves nothing to warn of');
    const again = await call('PATCH', `/${pool.id}`, { description: 'edited again' });
    assert.equal(again.success, true);
    assert.equal(again.messages[0]?.code, 1100);
    assert.match(again.messages[0]?.message ?? '', /"declared" is declared in the config file.*overwrites this change/);
    const other = await call('POST', '', { name: 'api-only', origins: [{ name: 'b', address: 'http://127.0.0.1:9' }] });
    assert.deepEqual(other.messages, []);
    assert.deepEqual((await call('PATCH', `/${other.result.id}`, { description: 'mine' })).messages, []);
    await app?.close();

    await start('apply');
    const pools = await declared();
    assert.equal(
      pools.find((p) => p.name === 'declared')?.description,
      'from the file',
      'overwritten at the next start',
    );
    assert.equal(
      pools.find((p) => p.name === 'api-only')?.description,
      'mine',
      'pools the file does not declare are kept',
    );
  } finally {
    await app?.close();
    location.cleanup();
  }
});
