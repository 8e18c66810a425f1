// Token revocation across processes sharing one store, and `switchyard token list|revoke`: a `serve`
// child process and an in-process app use the same database (one SQLite file, or one PostgreSQL database
// in the PostgreSQL pass); a token disabled, rolled or deleted through one is refused by the other within
// 1 s, and so is a token revoked with the CLI (a third process) while both run.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Cloudflare from 'cloudflare';
import { stringify } from 'yaml';
import { READ_GROUP_ID, WRITE_GROUP_ID } from '../../src/accounts/token-permissions.js';
import { hashToken } from '../../src/accounts/tokens.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { type CliProcess, runCli, spawnCli } from '../helpers/cli.js';
import { type TestStoreLocation, testStoreLocation } from '../helpers/store.js';

const REVOCATION_BOUND_MS = 1_000;

describe('token revocation across processes, token list and token revoke', () => {
  let location: TestStoreLocation;
  let configFile = '';
  let serve: CliProcess;
  let serveApi = '';
  let app: TestApp;
  let account_id = '';
  let admin = '';
  let sdk: Cloudflare;

  before(async () => {
    location = await testStoreLocation();
    configFile = join(location.data_dir, 'switchyard.yaml');
    const shared = {
      data_dir: location.data_dir,
      ...(location.database_url ? { database_url: location.database_url } : {}),
    };
    writeFileSync(
      configFile,
      stringify({ ...shared, gateway: { listen: '127.0.0.1:0' }, api: { listen: '127.0.0.1:0' } }),
    );
    serve = spawnCli(['serve', '--config', configFile]);
    const started = await serve.waitForLog((line) => line.msg === 'switchyard started', 60_000);
    serveApi = String(started.api);
    app = await startApp(shared);
    account_id = app.config.account_id;
    const made = await runCli(['token', 'create', '--account', account_id, '--name', 'admin', '--config', configFile]);
    assert.equal(made.code, 0, made.stderr);
    admin = made.stdout.trim().split('\n').at(-1) as string;
    sdk = new Cloudflare({ apiToken: admin, baseURL: app.apiUrl, maxRetries: 0 });
  });
  after(async () => {
    await app?.close();
    serve?.kill('SIGTERM');
    await serve?.waitForExit(30_000);
    location?.cleanup();
  });

  const verifyOn = async (apiUrl: string, token: string) =>
    (
      await fetch(`${apiUrl}/accounts/${account_id}/tokens/verify`, {
        headers: { authorization: `Bearer ${token}` },
      })
    ).status;
  /** Asks `apiUrl` until it refuses `token`; fails when that takes longer than the revocation bound. */
  const refusedWithin = async (apiUrl: string, token: string, what: string) => {
    const started = performance.now();
    for (;;) {
      const status = await verifyOn(apiUrl, token);
      const elapsed = performance.now() - started;
      if (status === 401) return elapsed;
      assert.equal(status, 200, what);
      assert.ok(elapsed < REVOCATION_BOUND_MS, `${what}: still accepted after ${Math.round(elapsed)} ms`);
    }
  };
  const create = async (name: string, group = READ_GROUP_ID) => {
    const created = await sdk.accounts.tokens.create({
      account_id,
      name,
      policies: [
        {
          effect: 'allow',
          permission_groups: [{ id: group }],
          resources: { [`com.cloudflare.api.account.${account_id}`]: '*' },
        },
      ],
    });
    const value = created.value as string;
    assert.equal(await verifyOn(serveApi, value), 200, `${name} works on the other process`);
    return { id: created.id as string, value };
  };

  test('disable, roll and delete through one process are refused by the other within 1 s', async () => {
    const disabled = await create('to-disable');
    await sdk.accounts.tokens.update(disabled.id, { account_id, status: 'disabled' } as never);
    await refusedWithin(serveApi, disabled.value, 'disabled');

    const rolled = await create('to-roll');
    const fresh = await sdk.accounts.tokens.value.update(rolled.id, { account_id });
    await refusedWithin(serveApi, rolled.value, 'rolled (old value)');
    assert.equal(await verifyOn(serveApi, fresh), 200, 'the new value works on the other process');

    const deleted = await create('to-delete');
    await sdk.accounts.tokens.delete(deleted.id, { account_id });
    await refusedWithin(serveApi, deleted.value, 'deleted');

    // And the other way round: a change made through the serve process is seen in-process.
    const other = new Cloudflare({ apiToken: admin, baseURL: serveApi, maxRetries: 0 });
    const reverse = await create('reverse');
    await other.accounts.tokens.delete(reverse.id, { account_id });
    await refusedWithin(app.apiUrl, reverse.value, 'deleted through serve');
  });

  test('token list prints id, access, status, dates and name, never a value or hash', async () => {
    const writer = await create('list-writer', WRITE_GROUP_ID);
    const reader = await create('list "reader"');
    await sdk.accounts.tokens.update(reader.id, { account_id, status: 'disabled' } as never);
    const listed = await runCli(['token', 'list', '--account', account_id, '--config', configFile]);
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^ID\s+ACCESS\s+STATUS\s+ISSUED\s+LAST USED\s+NAME$/);
    const row = (id: string) => lines.find((line) => line.startsWith(id)) ?? '';
    assert.match(row(writer.id), /^[0-9a-f]{32}\s+write\s+active\s+\S+Z\s+\S+\s+"list-writer"$/);
    assert.match(row(reader.id), /^[0-9a-f]{32}\s+read\s+disabled\s+\S+Z\s+\S+\s+"list \\"reader\\""$/);
    for (const secret of [admin, writer.value, reader.value]) {
      assert.ok(!listed.stdout.includes(secret) && !listed.stderr.includes(secret), 'no value');
      assert.ok(!listed.stdout.includes(hashToken(secret)), 'no hash');
    }
  });

  test('token revoke (a third process) is seen by both running processes within 1 s', async () => {
    const victim = await create('leaked', WRITE_GROUP_ID);
    assert.equal(await verifyOn(app.apiUrl, victim.value), 200);
    const revoked = await runCli(['token', 'revoke', '--account', account_id, victim.id, '--config', configFile]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stderr, new RegExp(`revoked token ${victim.id}`));
    await refusedWithin(serveApi, victim.value, 'revoked, on serve');
    await refusedWithin(app.apiUrl, victim.value, 'revoked, in-process');
    const listed = await runCli(['token', 'list', '--account', account_id, '--config', configFile]);
    assert.ok(!listed.stdout.includes(victim.id), 'gone from the list');

    const again = await runCli(['token', 'revoke', '--account', account_id, victim.id, '--config', configFile]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /has no token/);
  });

  test('token revoke refuses another account and malformed arguments', async () => {
    const kept = await create('kept');
    const wrongAccount = await runCli([
      'token',
      'revoke',
      '--account',
      'e'.repeat(32),
      kept.id,
      '--config',
      configFile,
    ]);
    assert.equal(wrongAccount.code, 1, 'a token id of another account is not found');
    assert.equal(await verifyOn(serveApi, kept.value), 200, 'and the token still works');
    for (const args of [
      ['token', 'revoke', '--account', account_id, '--config', configFile],
      ['token', 'revoke', '--account', account_id, 'not-an-id', '--config', configFile],
      ['token', 'revoke', '--account', account_id, kept.id, kept.id, '--config', configFile],
      ['token', 'revoke', kept.id, '--config', configFile],
      ['token', 'list', '--config', configFile],
      ['token', 'list', '--account', 'XYZ', '--config', configFile],
      ['token', 'rotate', '--account', account_id, '--config', configFile],
      ['token', 'create', '--account', account_id, '--name', 'a\nb', '--config', configFile],
    ]) {
      const res = await runCli(args);
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, /token/);
    }
    assert.equal(await verifyOn(serveApi, kept.value), 200);
  });
});
