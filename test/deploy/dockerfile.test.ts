/**
 * deploy/Dockerfile without a container engine: its stages are played in a temp directory
 * (test/deploy/dockerfile.ts) over a build context made of the checkout's tracked files, less what
 * .dockerignore leaves out. The RUN steps really run — `npm ci` for both stages, `npm run build` — with
 * npm preferring its local cache, and better-sqlite3's prebuilt binding taken from this checkout's install
 * where a real build downloads it (the machines reach no download host but the npm registry). Then the
 * image's ENTRYPOINT + CMD start the built server from the runtime stage's directory, on its own config
 * file with the listeners moved to 127.0.0.1:0 through the variables that file reads, before a real anvil
 * node; the image's HEALTHCHECK command, the Kubernetes probe paths, a JSON-RPC call and SIGTERM are tried
 * against it.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { rpc, send } from '../helpers/http.js';
import { inRoot, mappedCommand, type PlayedStage, parseDockerfile, playStage } from './dockerfile.js';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-dockerfile-'));
const stages = parseDockerfile(readFileSync(join(REPO_ROOT, 'deploy/Dockerfile'), 'utf8'));
const played = new Map<string, PlayedStage>();
let runtime: PlayedStage;
let anvil: AnvilNode | undefined;
let server: ChildProcess | undefined;

after(async () => {
  server?.kill('SIGKILL');
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The checkout's tracked files, less the .dockerignore patterns (names, directories, `*.ext`). */
function buildContext(): string {
  const context = join(dir, 'context');
  const ignored = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const skip = (file: string): boolean =>
    ignored.some((pattern) =>
      pattern.startsWith('*.') ? file.endsWith(pattern.slice(1)) : file === pattern || file.startsWith(`${pattern}/`),
    );
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: REPO_ROOT, encoding: 'utf8' }).split('\0');
  for (const file of files) {
    if (file === '' || skip(file) || !existsSync(join(REPO_ROOT, file))) continue;
    mkdirSync(dirname(join(context, file)), { recursive: true });
    cpSync(join(REPO_ROOT, file), join(context, file));
  }
  return context;
}

/** better-sqlite3's binding as prebuild-install's local prebuild, named as its download would be. */
function localPrebuilds(): string {
  const prebuilds = join(dir, 'prebuilds');
  mkdirSync(prebuilds);
  const require = createRequire(join(REPO_ROOT, 'package.json'));
  const pkg = dirname(require.resolve('better-sqlite3/package.json'));
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', ['czf', join(prebuilds, name), 'build/Release/better_sqlite3.node'], { cwd: pkg });
  return prebuilds;
}

/** The image's own config (the file CMD names), loaded as the container would, with `env` added. */
function imageConfig(env: NodeJS.ProcessEnv) {
  const file = runtime.cmd[runtime.cmd.indexOf('--config') + 1] as string;
  return { file, config: loadConfig(inRoot(runtime.root, file), { env: { ...runtime.env, ...env } }) };
}

function portOf(listen: string): number {
  return Number.parseInt(listen.slice(listen.lastIndexOf(':') + 1), 10);
}

/** The first stderr JSON line with msg `msg`; rejects on exit or after `timeoutMs`. */
function logLine(child: ChildProcess, msg: string, timeoutMs: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no "${msg}" within ${timeoutMs} ms\n${text}`)), timeoutMs);
    child.stderr?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      for (const line of text.split('\n')) {
        if (!line.includes(`"msg":"${msg}"`)) continue;
        clearTimeout(timer);
        resolve(JSON.parse(line) as Record<string, unknown>);
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited (${code}) before "${msg}"\n${text}`)));
  });
}

describe('deploy/Dockerfile, played without a container engine', { timeout: 1_500_000 }, () => {
  before(
    () => {
      const context = buildContext();
      const runEnv = {
        npm_config_prefer_offline: 'true',
        npm_config_update_notifier: 'false',
        'prebuild-install_local-prebuilds': localPrebuilds(),
      };
      for (const stage of stages) {
        const root = join(dir, `stage-${stage.name}`);
        played.set(stage.name, playStage(stage, { context, root, stages: played, runEnv, runTimeoutMs: 600_000 }));
      }
      runtime = played.get(stages.at(-1)?.name ?? '') as PlayedStage;
    },
    // About 100 s of CPU (two npm ci and a build): minutes on a busy 2-core machine.
    { timeout: 1_200_000 },
  );

  it('builds in one stage and runs from another that installs production dependencies only, as a non-root user', () => {
    assert.ok(stages.length >= 2, 'multi-stage');
    const last = stages.at(-1);
    assert.ok(
      last?.steps.some((step) => step.keyword === 'RUN' && /\bnpm ci\b.*--omit=dev/.test(step.args)),
      'the runtime stage runs npm ci --omit=dev',
    );
    assert.ok(!['', 'root', '0'].includes(runtime.user.split(':')[0] as string), `USER ${runtime.user}`);
    const modules = inRoot(runtime.root, join(runtime.workdir, 'node_modules'));
    assert.ok(existsSync(join(modules, 'better-sqlite3/build/Release/better_sqlite3.node')), 'the SQLite binding');
    for (const dev of ['typescript', 'esbuild', 'tsx', '@biomejs/biome']) {
      assert.ok(!existsSync(join(modules, dev)), `dev dependency ${dev} left out`);
    }
    assert.ok(
      existsSync(inRoot(runtime.root, join(runtime.workdir, 'dist/cli/main.js'))),
      'dist/ from the build stage',
    );
  });

  it('exposes the ports and declares the volumes its config uses; data owned by the runtime user; SIGTERM', () => {
    const { file, config } = imageConfig({ SEPOLIA_ORIGIN_URL: 'http://127.0.0.1:9545' });
    assert.deepEqual(runtime.exposed, [portOf(config.gateway.listen), portOf(config.api.listen)]);
    for (const listen of [config.gateway.listen, config.api.listen]) assert.match(listen, /^0\.0\.0\.0:/);
    assert.ok(runtime.volumes.includes(config.data_dir), `VOLUME ${config.data_dir} (data_dir)`);
    assert.ok(runtime.volumes.includes(dirname(file)), `VOLUME ${dirname(file)} (the config file's directory)`);
    for (const volume of runtime.volumes) assert.ok(existsSync(inRoot(runtime.root, volume)), `${volume} exists`);
    assert.equal(runtime.owners[config.data_dir], `${runtime.user}:${runtime.user}`, 'data_dir is writable by USER');
    assert.equal(runtime.stopSignal, 'SIGTERM');
    assert.ok(runtime.healthcheck !== undefined, 'HEALTHCHECK');
  });

  it('starts from ENTRYPOINT + CMD: HEALTHCHECK, the Kubernetes probe paths, a JSON-RPC call, then SIGTERM', async () => {
    anvil = await startTestAnvil();
    const dataDir = imageConfig({ SEPOLIA_ORIGIN_URL: anvil.url }).config.data_dir;
    // A container's environment: the image's ENV and what the operator sets, nothing of npm's or this test's.
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      ...runtime.env,
      SWITCHYARD_GATEWAY_LISTEN: '127.0.0.1:0',
      SWITCHYARD_API_LISTEN: '127.0.0.1:0',
      SWITCHYARD_DATA_DIR: inRoot(runtime.root, dataDir),
      SEPOLIA_ORIGIN_URL: anvil.url,
    };
    const [node, ...command] = mappedCommand(runtime, [...runtime.entrypoint, ...runtime.cmd]);
    assert.equal(node, 'node');
    server = spawn(process.execPath, command, {
      cwd: inRoot(runtime.root, runtime.workdir),
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => server?.once('exit', (code) => resolve(code)));
    const started = await logLine(server, 'switchyard started', 120_000);
    const gateway = started.gateway as string;
    const api = started.api as string;

    const [healthNode, ...healthArgs] = mappedCommand(runtime, runtime.healthcheck ?? []);
    assert.equal(healthNode, 'node');
    const healthcheck = () =>
      spawnSync(process.execPath, healthArgs, {
        env: { ...env, SWITCHYARD_GATEWAY_LISTEN: `0.0.0.0:${new URL(gateway).port}` },
        encoding: 'utf8',
        timeout: 30_000,
      });
    assert.equal(healthcheck().status, 0, healthcheck().stderr);

    const deployment = parseAllDocuments(readFileSync(join(REPO_ROOT, 'deploy/kubernetes/deployment.yaml'), 'utf8'))
      .map((doc) => doc.toJS() as { kind?: string; spec: { template: { spec: { containers: ProbeContainer[] } } } })
      .find((doc) => doc.kind === 'Deployment');
    const container = deployment?.spec.template.spec.containers[0] as ProbeContainer;
    const paths = [container.livenessProbe, container.readinessProbe, container.startupProbe].map(
      (p) => p.httpGet.path,
    );
    for (const path of paths) await waitForStatus(`${gateway}${path}`, 200, 120_000);

    const { answer } = await rpc(`${gateway}/v1/sepolia`, 'eth_chainId');
    assert.equal(answer.result, '0xaa36a7');
    assert.equal((await send(`${new URL(api).origin}/metrics`, { method: 'GET' })).status, 200);
    assert.ok(existsSync(join(env.SWITCHYARD_DATA_DIR as string, 'switchyard.db')), 'the store is in the data volume');

    server.kill('SIGTERM');
    assert.equal(await exited, 0);
    const down = healthcheck();
    assert.equal(down.status, 1, 'the HEALTHCHECK fails once the gateway is gone');
    assert.match(down.stderr, /healthcheck: http:\/\/127\.0\.0\.1:\d+\/healthz/);
  });
});

interface ProbeContainer {
  livenessProbe: { httpGet: { path: string } };
  readinessProbe: { httpGet: { path: string } };
  startupProbe: { httpGet: { path: string } };
}

async function waitForStatus(url: string, status: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 0;
  while (Date.now() < deadline) {
    last = (await send(url, { method: 'GET' })).status;
    if (last === status) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  assert.fail(`${url} answered ${last}, not ${status}, for ${timeoutMs} ms`);
}
