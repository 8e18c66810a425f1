/**
 * `switchyard config check|diff|apply` and `pools_from_file` against a running `serve` (spawned CLI, on
 * whichever store backend the run selects; test/api/ runs on both): check's exit codes 0/1/2; diff shows
 * each field (secrets masked); apply is idempotent and the running gateway routes to an origin it added
 * within 1 s; --prune asks at a terminal (driven through `script`, a pty from util-linux), refuses
 * without one unless --yes; serve under `seed` warns once of pools that differ.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { type CliProcess, REPO_ROOT, runCli, spawnCli } from '../helpers/cli.js';
import { post, startHttpServer, type TestServer } from '../helpers/http.js';
import { type TestStoreLocation, testStoreLocation } from '../helpers/store.js';

/** A JSON-RPC origin that answers web3_clientVersion with its own name (and enough else to look like a node). */
function namedOrigin(name: string): Promise<TestServer> {
  return startHttpServer((_req, res, body) => {
    let call: { id?: unknown; method?: string } = {};
    try {
      call = JSON.parse(body) as typeof call;
    } catch {
      // A monitor's GET: no body.
    }
    const result =
      call.method === 'eth_chainId'
        ? '0xaa36a7'
        : call.method === 'eth_blockNumber'
          ? '0x10'
          : call.method === 'eth_syncing'
            ? false
            : name;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id ?? null, result }));
  });
}

const VERSION_CALL = '{"jsonrpc":"2.0","id":1,"method":"web3_clientVersion","params":[]}';

describe('config check', () => {
  let location: TestStoreLocation;
  before(async () => {
    location = await testStoreLocation();
  });
  after(() => location.cleanup());

  const write = (name: string, config: Record<string, unknown>): string => {
    const path = join(location.data_dir, name);
    const store = {
      data_dir: join(location.data_dir, 'store'),
      ...(location.database_url ? { database_url: location.database_url } : {}),
    };
    writeFileSync(path, stringify({ ...store, ...config }));
    return path;
  };
  const pool = (name: string) => ({ name, origins: [{ name: 'a', address: 'http://127.0.0.1:9' }] });

  it('exit 0 for a clean file, 1 for warnings only, 2 for errors — every problem listed with its path', async () => {
    const clean = write('clean.yaml', {
      networks: { sepolia: { chain_id: 11155111, pools: ['main'] } },
      pools: [pool('main')],
    });
    const ok = await runCli(['config', 'check', '--config', clean]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, '');
    assert.match(ok.stderr, /no problems/);

    const warned = write('warned.yaml', {
      networks: { sepolia: { chain_id: 11155111, pools: ['main', 'mian'] } },
      pools: [pool('main'), pool('spare')],
    });
    const warnings = await runCli(['config', 'check', '--config', warned]);
    assert.equal(warnings.code, 1, warnings.stderr);
    assert.deepEqual(warnings.stdout.trim().split('\n'), [
      'networks.sepolia.pools.1: warning: pool "mian" is neither in the file nor in the store; the network answers 503 for it until one of that name exists; did you mean `main`?',
      'pools.1: warning: pool "spare" is not used by any network',
    ]);

    const broken = write('broken.yaml', {
      gatway: { listen: '127.0.0.1:0' },
      api: { lisen: '127.0.0.1:0', max_body_bytes: 'lots' },
      networks: {
        Sepolia: { chain_id: 11155111 },
        mainnet: { chain_id: 1, pools: ['main', 'mainn'] },
        goerli: { chain_id: 5, retired_on: '2024-01-01', replacement: 'mainet' },
      },
      pools: [{ name: 'main', origins: [{ name: 'a', address: 'http://127.0.0.1:9', wieght: 1 }] }, pool('main')],
    });
    const errors = await runCli(['config', 'check', '--config', broken]);
    assert.equal(errors.code, 2, errors.stderr);
    const lines = errors.stdout.trim().split('\n');
    for (const pattern of [
      /^gatway: unknown key; did you mean `gateway`\?$/,
      /^api\.lisen: unknown key; did you mean `listen`\?$/,
      /^api\.max_body_bytes: /,
      /^networks\.Sepolia: .*did you mean `sepolia`\?$/,
      /^networks\.goerli\.replacement: "mainet" is not a configured network; did you mean `mainnet`\?$/,
      /^pools\.0\.origins\.0\.wieght: unknown key; did you mean `weight`\?$/,
      /^pools\.1\.name: pool "main" is declared twice$/,
      /^networks\.mainnet\.pools\.1: warning: pool "mainn" .*did you mean `main`\?$/,
    ]) {
      assert.ok(
        lines.some((line) => pattern.test(line)),
        `${pattern} in\n${errors.stdout}`,
      );
    }
    assert.match(errors.stderr, /broken\.yaml: 7 errors, 1 warning/);

    // serve prints the same list and exits 2.
    const serve = await runCli(['serve', '--config', broken]);
    assert.equal(serve.code, 2);
    for (const line of lines.filter((l) => !l.includes('warning:'))) assert.ok(serve.stderr.includes(line), line);
  });
});

describe('config diff and apply against a running serve', () => {
  let location: TestStoreLocation;
  let origins: Record<'a' | 'b' | 'c', TestServer>;
  let serve: CliProcess;
  let gateway = '';
  let configFile = '';

  const storeKeys = () => ({
    data_dir: location.data_dir,
    ...(location.database_url ? { database_url: location.database_url } : {}),
  });
  const writeConfig = (pools: unknown[], networkPools: string[], extra: Record<string, unknown> = {}) =>
    writeFileSync(
      configFile,
      stringify({
        ...storeKeys(),
        gateway: { listen: '127.0.0.1:0' },
        api: { listen: '127.0.0.1:0' },
        networks: { sepolia: { chain_id: 11155111, pools: networkPools } },
        pools,
        ...extra,
      }),
    );
  const cli = (...args: string[]) => runCli([...args, '--config', configFile]);
  const servedBy = async () => (await post(`${gateway}/v1/sepolia`, VERSION_CALL)).json<{ result?: string }>().result;
  /** Polls the gateway until `name` answers; fails once 1 s has passed since `since`. */
  const routedWithin1s = async (name: string, since: number) => {
    while ((await servedBy()) !== name) {
      assert.ok(Date.now() - since < 1000, `the gateway routes to ${name} within 1 s of the apply`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  const MAIN_V1 = { name: 'main', origins: [{ name: 'a', address: '' }] };

  before(async () => {
    location = await testStoreLocation();
    origins = { a: await namedOrigin('a'), b: await namedOrigin('b'), c: await namedOrigin('c') };
    configFile = join(location.data_dir, 'switchyard.yaml');
    MAIN_V1.origins[0]!.address = origins.a.url;
    writeConfig([MAIN_V1], ['main']);
    serve = spawnCli(['serve', '--config', configFile]);
    gateway = String((await serve.waitForLog((line) => line.msg === 'switchyard started', 60_000)).gateway);
  });
  after(async () => {
    serve?.kill('SIGTERM');
    await serve?.waitForExit(30_000);
    await Promise.all(Object.values(origins ?? {}).map((server) => server.close()));
    location.cleanup();
  });

  it('diff shows each difference (masked); apply makes the store match, the gateway routes to it within 1 s, and a second apply changes nothing', async () => {
    assert.equal(await servedBy(), 'a');
    const same = await cli('config', 'diff');
    assert.equal(same.code, 0, same.stderr);
    assert.equal(same.stdout, '');

    const main = {
      name: 'main',
      origins: [
        { name: 'a', address: origins.a.url, enabled: false },
        { name: 'b', address: `${origins.b.url}/?apikey=s3cr3t-b`, header: { 'X-Api-Key': ['s3cr3t-h'] } },
      ],
      monitor: { type: 'http', path: '/', interval: 30 },
    };
    const backup = { name: 'backup', origins: [{ name: 'c', address: origins.c.url }] };
    writeConfig([main, backup], ['main', 'backup']);
    const diff = await cli('config', 'diff');
    assert.equal(diff.code, 1, diff.stderr);
    const lines = diff.stdout.split('\n');
    assert.ok(lines.includes('~ main:'), diff.stdout);
    assert.ok(lines.includes('    origins.a.enabled: true → false'), diff.stdout);
    assert.ok(
      lines.some((line) => line.startsWith('    origins.b: (none) → {') && line.includes('apikey=***')),
      diff.stdout,
    );
    assert.ok(
      lines.some((line) => line.startsWith('    monitor: (none) → {"type":"http"')),
      diff.stdout,
    );
    assert.ok(
      lines.some((line) => line.startsWith('+ backup: not in the store')),
      diff.stdout,
    );
    assert.ok(!diff.stdout.includes('s3cr3t'), 'secrets are masked');

    const apply = await cli('config', 'apply');
    const applied = Date.now();
    assert.equal(apply.code, 0, apply.stderr);
    assert.deepEqual(apply.stdout.trim().split('\n').sort(), ['created backup', 'updated main']);
    // a is disabled now, b added: the running gateway (another process) routes to b within 1 s.
    await routedWithin1s('b', applied);
    assert.ok(
      origins.b.received.some((r) => r.url === '/?apikey=s3cr3t-b'),
      'the real address is used',
    );
    // Twice more, each measured (the store is polled: one lucky round proves little): c added, then b back.
    for (const [only, address] of [
      ['c', origins.c.url],
      ['b', `${origins.b.url}/?apikey=s3cr3t-b`],
    ] as const) {
      writeConfig([{ ...main, origins: [{ name: only, address }] }, backup], ['main', 'backup']);
      const round = await cli('config', 'apply');
      const at = Date.now();
      assert.equal(round.code, 0, round.stderr);
      await routedWithin1s(only, at);
    }
    writeConfig([main, backup], ['main', 'backup']);
    assert.equal((await cli('config', 'apply')).code, 0);

    const again = await cli('config', 'apply');
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, '');
    assert.match(again.stderr, /0 created, 0 updated, 2 unchanged, 0 deleted/);
    const after = await cli('config', 'diff');
    assert.equal(after.code, 0, after.stdout);
  });

  it('--prune refuses without a terminal unless --yes, asks at one, and keeps what a network names', async () => {
    const main = { name: 'main', origins: [{ name: 'b', address: origins.b.url }] };
    const stray = { name: 'stray', origins: [{ name: 'c', address: origins.c.url }] };
    const routed = { name: 'routed', origins: [{ name: 'c', address: origins.c.url }] };
    writeConfig([main, stray, routed], ['main', 'routed']);
    assert.equal((await cli('config', 'apply')).code, 0);
    // Now the file declares only main; routed stays named by the network.
    writeConfig([main], ['main', 'routed']);
    const listed = await cli('config', 'diff');
    assert.ok(listed.stdout.includes('- stray: only in the store'), listed.stdout);
    assert.ok(listed.stdout.includes('- backup: only in the store'), listed.stdout);
    assert.ok(!listed.stdout.includes('- routed'), listed.stdout);

    const refused = await cli('config', 'apply', '--prune');
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--prune would delete 2 pool\(s\) \(backup, stray\).*--yes/);
    assert.match((await cli('config', 'diff')).stdout, /- stray/);

    const no = await inTerminal(['config', 'apply', '--prune', '--config', configFile], 'n\n');
    assert.match(no.output, /Delete 2 pool\(s\)\? \[y\/N\]/);
    assert.match(no.output, /cancelled; nothing changed/);
    assert.match((await cli('config', 'diff')).stdout, /- stray/);

    const yes = await inTerminal(['config', 'apply', '--prune', '--config', configFile], 'y\n');
    assert.match(yes.output, /deleted backup/);
    assert.match(yes.output, /deleted stray/);
    const left = await cli('config', 'diff');
    assert.equal(left.code, 0, left.stdout);
    assert.ok(!left.stdout.includes('- stray') && !left.stdout.includes('- backup'), left.stdout);

    // --yes without a terminal deletes at once; plain apply never asks.
    writeConfig([main, stray], ['main', 'routed']);
    assert.equal((await cli('config', 'apply')).code, 0);
    writeConfig([main], ['main', 'routed']);
    const pruned = await cli('config', 'apply', '--prune', '--yes');
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.equal(pruned.stdout.trim(), 'deleted stray');
  });
});

/** Runs the CLI with a terminal as stdin and stdout (`script` from util-linux), typing `input`. */
function inTerminal(args: readonly string[], input: string): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, '--import', 'tsx', join(REPO_ROOT, 'src/cli/run.ts'), ...args]
    .map((word) => `'${word.replaceAll("'", "'\\''")}'`)
    .join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    // Answer once the question is on the screen.
    if (output.includes('[y/N]') && !child.stdin.writableEnded) child.stdin.end(input);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`switchyard ${args.join(' ')} in a terminal did not exit\n${output}`));
    }, 60_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
