// `switchyard account create` and `switchyard token create` against the store a running `serve` uses.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { type CliProcess, runCli, spawnCli } from '../helpers/cli.js';
import { type TestStoreLocation, testStoreLocation } from '../helpers/store.js';

describe('account and token commands while serve runs', () => {
  let location: TestStoreLocation;
  let configFile = '';
  let serve: CliProcess;
  let apiUrl = '';

  before(async () => {
    location = await testStoreLocation();
    configFile = join(location.data_dir, 'switchyard.yaml');
    const config = {
      data_dir: location.data_dir,
      ...(location.database_url ? { database_url: location.database_url } : {}),
      gateway: { listen: '127.0.0.1:0' },
      api: { listen: '127.0.0.1:0' },
    };
    writeFileSync(configFile, stringify(config));
    serve = spawnCli(['serve', '--config', configFile]);
    const started = await serve.waitForLog((line) => line.msg === 'switchyard started', 60_000);
    apiUrl = String(started.api);
  });
  after(async () => {
    serve.kill('SIGTERM');
    await serve.waitForExit(30_000);
    location.cleanup();
  });

  const get = async (path: string, token: string) =>
    fetch(`${apiUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });

  test('account create prints the id; token create prints a working token as the last line', async () => {
    const account = await runCli(['account', 'create', '--name', 'team', '--config', configFile]);
    assert.equal(account.code, 0, account.stderr);
    const id = account.stdout.trim();
    assert.match(id, /^[0-9a-f]{32}$/);

    const token = await runCli(['token', 'create', '--account', id, '--name', 'ci', '--config', configFile]);
    assert.equal(token.code, 0, token.stderr);
    const lines = token.stdout.trim().split('\n');
    const secret = lines.at(-1) as string;
    assert.match(secret, /^swy_[A-Za-z0-9]{40}$/);
    assert.ok(!token.stderr.includes(secret), 'the token appears only on stdout');

    assert.equal((await get('/user/tokens/verify', secret)).status, 200);
    const list = await get(`/accounts/${id}/load_balancers/pools`, secret);
    assert.equal(list.status, 200);
    const post = await fetch(`${apiUrl}/accounts/${id}/load_balancers/pools`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      // A tenant account (not the routing one): a public-looking name, since loopback is refused to it.
      body: JSON.stringify({ name: 'p', origins: [{ name: 'o', address: 'origin.invalid:1' }] }),
    });
    assert.equal(post.status, 200);

    const readOnly = await runCli(['token', 'create', '--account', id, '--read-only', '--config', configFile]);
    assert.equal(readOnly.code, 0, readOnly.stderr);
    const ro = readOnly.stdout.trim().split('\n').at(-1) as string;
    assert.equal((await get(`/accounts/${id}/load_balancers/pools`, ro)).status, 200);
    const refused = await fetch(`${apiUrl}/accounts/${id}/load_balancers/pools`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${ro}`, 'content-type': 'application/json' },
      body: '{"notification_email":""}',
    });
    assert.equal(refused.status, 403);

    const again = await runCli(['account', 'create', '--id', id, '--config', configFile]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists/);
  });

  test('errors: unknown account (1), missing or malformed options (2)', async () => {
    const unknown = await runCli(['token', 'create', '--account', 'f'.repeat(32), '--config', configFile]);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stdout, '');
    assert.match(unknown.stderr, /no account f{32}/);
    const missing = await runCli(['token', 'create', '--config', configFile]);
    assert.equal(missing.code, 2);
    const badId = await runCli(['account', 'create', '--id', 'XYZ', '--config', configFile]);
    assert.equal(badId.code, 2);
  });
});
