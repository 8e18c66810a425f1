/** The real `switchyard` CLI (spawned, no terminal) running migrate-notifications against the stub API. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { fixturePools } from './fixture.js';
import { StubApi } from './stub-api.js';

const ACCOUNT = 'abcdef0123456789abcdef0123456789';
const TOKEN = 'spawned-cli-token';
let api: StubApi;

before(async () => {
  api = await StubApi.start({ accountId: ACCOUNT, token: TOKEN });
  for (const pool of fixturePools(12)) api.addPool(pool.name, pool.notification_email, pool.notification_filter);
});
after(() => api.close());

test('without a terminal and without --yes it refuses (exit 2) and contacts nobody; with --yes it migrates', async () => {
  const env = { CLOUDFLARE_API_TOKEN: TOKEN };
  const refused = await runCli(['migrate-notifications', '--account', ACCOUNT, '--api-url', api.url], { env });
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /refusing to change anything without confirmation: not running in a terminal/);
  assert.deepEqual(api.requests, []);

  const done = await runCli(
    ['migrate-notifications', '--account', ACCOUNT, '--api-url', api.url, '--yes', '--per-page', '5'],
    {
      env,
    },
  );
  assert.equal(done.code, 0, done.stderr + done.stdout);
  assert.match(done.stdout, /result: complete/);
  assert.doesNotMatch(done.stdout + done.stderr, new RegExp(TOKEN), 'the token is never printed');
  assert.deepEqual(api.withEmail(), []);
  assert.deepEqual(api.violations, []);
});
