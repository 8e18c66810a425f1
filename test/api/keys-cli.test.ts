// `switchyard key create|list|revoke` (SPEC §11) against a `serve` child process on the same store (one
// SQLite file, or one PostgreSQL database in the PostgreSQL pass): a key made with the CLI opens the
// running gateway, `key list` shows it without its value, and a key revoked with the CLI is refused by
// the running gateway within 1 s. Usage errors exit 2, an unknown key id exits 1.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { type CliProcess, runCli, spawnCli } from '../helpers/cli.js';
import { post, startHttpServer, type TestServer } from '../helpers/http.js';
import { type TestStoreLocation, testStoreLocation } from '../helpers/store.js';

const CALL = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
const REVOCATION_BOUND_MS = 1_000;

async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('switchyard key create, list, revoke', () => {
  let location: TestStoreLocation;
  let origin: TestServer;
  let configFile = '';
  let serve: CliProcess;
  let rpcUrl = '';

  before(async () => {
    origin = await startHttpServer((_req, res, body) => {
      const { id } = JSON.parse(body) as { id: unknown };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0xaa36a7' }));
    });
    location = await testStoreLocation();
    configFile = join(location.data_dir, 'switchyard.yaml');
    writeFileSync(
      configFile,
      stringify({
        data_dir: location.data_dir,
        ...(location.database_url ? { database_url: location.database_url } : {}),
        gateway: { listen: '127.0.0.1:0', require_key: true },
        api: { listen: '127.0.0.1:0' },
        networks: { sepolia: { chain_id: 11155111, pools: ['p'] }, holesky: { chain_id: 17000, pools: ['p'] } },
        pools: [{ name: 'p', origins: [{ name: 'o', address: origin.url }] }],
      }),
    );
    serve = spawnCli(['serve', '--config', configFile]);
    const started = await serve.waitForLog((line) => line.msg === 'switchyard started', 60_000);
    rpcUrl = `${String(started.gateway)}/v1/sepolia`;
  });
  after(async () => {
    serve?.kill('SIGTERM');
    await serve?.waitForExit(30_000);
    await origin?.close();
    location?.cleanup();
  });

  test('create prints the value once; the running gateway accepts it; list never shows it; revoke is enforced within 1 s', async () => {
    const made = await runCli([
      'key',
      'create',
      '--name',
      'ci "runner"',
      '--networks',
      'sepolia',
      '--requests-per-second',
      '2.5',
      '--daily-quota',
      '1000',
      '--config',
      configFile,
    ]);
    assert.equal(made.code, 0, made.stderr);
    const value = made.stdout.trim();
    assert.match(value, /^swk_[A-Za-z0-9]{40}$/);
    const id = /gateway key ([0-9a-f]{32})/.exec(made.stderr)?.[1] as string;
    assert.ok(id, made.stderr);
    const auth = { authorization: `Bearer ${value}` };
    await until(async () => (await post(rpcUrl, CALL, auth)).status === 200, 2000, 'the new key is accepted');
    assert.equal((await post(rpcUrl.replace('sepolia', 'holesky'), CALL, auth)).status, 403);

    const listed = await runCli(['key', 'list', '--config', configFile]);
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /^ID\s+ENABLED\s+NETWORKS\s+RATE LIMIT\s+DAILY QUOTA\s+CREATED\s+LAST USED\s+NAME$/);
    const row = lines.find((line) => line.startsWith(id)) as string;
    assert.match(row, /\syes\s+sepolia\s+2\.5\/s burst 3\s+1000\s/);
    assert.ok(row.endsWith('"ci \\"runner\\""'));
    assert.ok(!listed.stdout.includes(value) && !listed.stderr.includes(value));

    const revoked = await runCli(['key', 'revoke', id, '--config', configFile]);
    assert.equal(revoked.code, 0, revoked.stderr);
    const at = Date.now();
    await until(
      async () => (await post(rpcUrl, CALL, auth)).status === 401,
      REVOCATION_BOUND_MS,
      'revoked key refused',
    );
    assert.ok(Date.now() - at < REVOCATION_BOUND_MS);
    assert.equal((await runCli(['key', 'revoke', id, '--config', configFile])).code, 1);
  });

  test('usage errors exit 2 naming the problem', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['key', 'create', '--networks', 'mainnet'], /"mainnet" is not a configured network/],
      [['key', 'create', '--burst', '2'], /--burst needs --requests-per-second/],
      [['key', 'create', '--daily-quota', '1.5'], /--daily-quota must be a whole number from 1 to 1000000000000/],
      [['key', 'create', '--daily-quota', '1e13'], /--daily-quota must be a whole number from 1 to 1000000000000/],
      [['key', 'create', '--requests-per-second', '0'], /--requests-per-second must be a number from 0.001 to 1000000/],
      [['key', 'create', '--requests-per-second', '5e-324'], /--requests-per-second must be a number from 0.001/],
      [['key', 'create', '--requests-per-second', '1', '--burst', '2e9'], /--burst must be a whole number from 1 to/],
      [['key', 'revoke', 'nope'], /KEY_ID must be 32 lowercase hex/],
      [['key', 'rotate'], /usage: switchyard key create/],
    ];
    const listed = async (): Promise<string> => (await runCli(['key', 'list', '--config', configFile])).stdout;
    const before = await listed();
    for (const [args, message] of cases) {
      const result = await runCli([...args, '--config', configFile]);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
    }
    assert.equal(await listed(), before, 'a refused command made no key');
  });
});
