/**
 * The build produces runnable JS: `bin/switchyard.js` (what `npx switchyard` runs) starts the compiled
 * `dist/` CLI, which serves JSON-RPC and stops on SIGTERM with exit 0. `npm test` builds first; when
 * `dist/` is missing outside CI (a single file run without `npm run build`) the test is skipped.
 *
 * `npx switchyard` itself, offline with an empty npx cache (what a newcomer's first run after `npm install`
 * is): npm exec links the checkout into its cache and runs `prepare`, which must find dist/ current and
 * compile nothing (scripts/build.mjs).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/cli.js';
import { post, type RpcAnswer, startHttpServer, type TestServer } from '../helpers/http.js';

const built = existsSync(join(REPO_ROOT, 'dist/cli/main.js'));
const dir = mkdtempSync(join(tmpdir(), 'switchyard-bin-'));
let origin: TestServer | undefined;

after(async () => {
  await origin?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the compiled CLI (bin/switchyard.js → dist/)', {
  skip: !built && !process.env.CI && 'dist/ not built',
}, () => {
  it('serves JSON-RPC and exits 0 on SIGTERM', async () => {
    origin = await startHttpServer((_req, res, body) => {
      const { id } = JSON.parse(body) as { id: unknown };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0xaa36a7' }));
    });
    const config = join(dir, 'serve.yaml');
    writeFileSync(
      config,
      [
        `data_dir: ${join(dir, 'data')}`,
        'gateway: { listen: "127.0.0.1:0" }',
        'api: { listen: "127.0.0.1:0" }',
        'networks: { sepolia: { chain_id: 11155111, pools: [p] } }',
        `pools: [{ name: p, origins: [{ name: o, address: "${origin.url}" }] }]`,
        '',
      ].join('\n'),
    );
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/switchyard.js'), 'serve', '--config', config], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      let stderr = '';
      const gateway = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start-up within 30 s\n${stderr}`)), 30_000);
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          const match = /"msg":"switchyard started","gateway":"([^"]+)"/.exec(stderr);
          if (match) {
            clearTimeout(timer);
            resolve(match[1] as string);
          }
        });
        void exited.then(() => reject(new Error(`serve exited during start-up\n${stderr}`)));
      });
      const res = await post(`${gateway}/v1/sepolia`, '{"jsonrpc":"2.0","id":7,"method":"eth_chainId"}');
      assert.deepEqual(res.json<RpcAnswer>(), { jsonrpc: '2.0', id: 7, result: '0xaa36a7' });
      child.kill('SIGTERM');
      assert.equal(await exited, 0, stderr);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('the first npx switchyard after install runs without recompiling (npm exec runs prepare on its cache link)', () => {
    // Bring dist/ up to date with the sources the way `npm install` does (a no-op under `npm test`).
    const prepared = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/build.mjs'), '--if-changed'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    assert.equal(prepared.status, 0, prepared.stderr);
    const main = join(REPO_ROOT, 'dist/cli/main.js');
    const stamp = join(REPO_ROOT, 'dist/.build-inputs');
    const before = { mtime: statSync(main).mtimeMs, stamp: readFileSync(stamp, 'utf8') };

    // An empty npx cache of its own, no network: exactly the first-run path of `npx switchyard …`.
    const npx = spawnSync(
      'npm',
      [
        'exec',
        '--offline',
        '--yes',
        '--foreground-scripts',
        '--cache',
        join(dir, 'npm-cache'),
        '--',
        'switchyard',
        '--help',
      ],
      { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000 },
    );
    assert.equal(npx.status, 0, `${npx.stdout}\n${npx.stderr}`);
    assert.match(npx.stdout, /usage: switchyard COMMAND \[options\]/, 'the CLI ran');
    // --foreground-scripts shows prepare's output: it ran, and found nothing to compile.
    assert.match(npx.stdout + npx.stderr, /dist\/ is current \(src\/ unchanged since the last build\)/);
    assert.doesNotMatch(npx.stdout + npx.stderr, /tsc -p tsconfig\.build\.json/);
    assert.deepEqual({ mtime: statSync(main).mtimeMs, stamp: readFileSync(stamp, 'utf8') }, before, 'dist/ untouched');
  });
});
