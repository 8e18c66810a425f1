/**
 * CLI manners (SPEC §15), with the CLI spawned as a child: `--version` (the package.json version, and the
 * commit in a git checkout; the built bin/switchyard.js of a copy without .git prints the version alone),
 * `help` and `--help` on every command (exit 0), the listen and data-dir overrides with their precedence
 * (flags > SWITCHYARD_* > file: told apart by 127.0.0.x addresses, all on free ports), a port in use
 * naming the address asked for and the flag or variable that set it, and store-only commands running
 * with an unrelated `${VAR}` unset. The built-in demo's devnet takes free ports when its default ones are
 * held (startDevnet, with a port this test holds standing in for 9545).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { buildConfig } from '../../src/config/load.js';
import { startDevnet } from '../../src/devnet/devnet.js';
import { createLogger } from '../../src/log.js';
import { REPO_ROOT, runCli, spawnCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-manners-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function config(name: string, content: Record<string, unknown>): string {
  const path = join(dir, name);
  writeFileSync(path, stringify(content));
  return path;
}

/** A port held by a listener of this test on 127.0.0.1; closed by the returned function. */
async function heldPort(): Promise<{ port: number; release: () => void }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, release: () => server.close() };
}

describe('--version and --help', () => {
  it('--version: the package version and, in a git checkout, its commit', async () => {
    const result = await runCli(['--version']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      new RegExp(`^switchyard ${VERSION.replaceAll('.', '\\.')} \\(commit [0-9a-f]{7,40}\\)\\n$`),
    );
  });

  it('the built CLI of an install without git prints the version alone', async () => {
    assert.ok(existsSync(join(REPO_ROOT, 'dist/cli/main.js')), 'npm run build first');
    const install = join(dir, 'install');
    mkdirSync(install);
    for (const part of ['bin', 'dist', 'package.json'])
      cpSync(join(REPO_ROOT, part), join(install, part), { recursive: true });
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(install, 'node_modules'));
    const result = spawnSync(process.execPath, [join(install, 'bin/switchyard.js'), '--version'], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout, `switchyard ${VERSION}\n`);
  });

  it('help, --help and -h print the overview; every command and subcommand takes --help (exit 0)', async () => {
    for (const args of [['help'], ['--help'], ['-h']]) {
      const result = await runCli(args);
      assert.equal(result.code, 0, args.join(' '));
      assert.match(result.stdout, /^usage: switchyard COMMAND/);
      assert.match(result.stdout, /config +check the config file/);
    }
    const commands = [
      ['serve', /--gateway-listen HOST:PORT/],
      ['config', /config apply \[--yes\] \[--prune\]/],
      ['account', /account create/],
      ['token', /token revoke/],
      ['key', /key list/],
      ['migrate-notifications', /migrate-notifications --account ID/],
    ] as const;
    for (const [command, usage] of commands) {
      for (const args of [
        [command, '--help'],
        ['help', command],
      ]) {
        const result = await runCli(args);
        assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stdout, usage, args.join(' '));
      }
    }
    for (const args of [
      ['config', 'check', '--help'],
      ['token', 'create', '-h'],
      ['key', 'revoke', '--help'],
    ]) {
      const result = await runCli(args);
      assert.equal(result.code, 0, args.join(' '));
      assert.match(result.stdout, /^usage: /, args.join(' '));
    }
    const none = await runCli([]);
    assert.equal(none.code, 2, 'no command is a usage error');
    const typo = await runCli(['sevre']);
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /unknown command "sevre"; did you mean `serve`\?/);
  });
});

describe('serve overrides: flags > environment > file', () => {
  const file = () =>
    config('listen.yaml', {
      data_dir: join(dir, 'from-file'),
      gateway: { listen: '127.0.0.1:0' },
      api: { listen: '127.0.0.1:0' },
    });

  async function started(args: string[], env: NodeJS.ProcessEnv) {
    const proc = spawnCli(['serve', ...args], { env });
    try {
      const line = await proc.waitForLog((l) => l.msg === 'switchyard started', 60_000);
      return { gateway: String(line.gateway), api: String(line.api) };
    } finally {
      proc.kill('SIGTERM');
      await proc.waitForExit(30_000);
    }
  }

  it('the environment wins over the file, a flag over the environment', async () => {
    const env = {
      SWITCHYARD_CONFIG: file(),
      SWITCHYARD_GATEWAY_LISTEN: '127.0.0.2:0',
      SWITCHYARD_API_LISTEN: '127.0.0.2:0',
      SWITCHYARD_DATA_DIR: join(dir, 'from-env'),
    };
    const fromEnv = await started([], env);
    assert.match(fromEnv.gateway, /^http:\/\/127\.0\.0\.2:\d+$/);
    assert.match(fromEnv.api, /^http:\/\/127\.0\.0\.2:\d+\/client\/v4$/);
    assert.ok(existsSync(join(dir, 'from-env', 'switchyard.db')), 'the data_dir of SWITCHYARD_DATA_DIR');
    assert.ok(!existsSync(join(dir, 'from-file')));

    const fromFlags = await started(['--gateway-listen', '127.0.0.3:0', '--data-dir', join(dir, 'from-flag')], env);
    assert.match(fromFlags.gateway, /^http:\/\/127\.0\.0\.3:\d+$/);
    assert.match(fromFlags.api, /^http:\/\/127\.0\.0\.2:\d+\/client\/v4$/, 'no flag: the environment still wins');
    assert.ok(existsSync(join(dir, 'from-flag', 'switchyard.db')), 'the data_dir of --data-dir');
  });

  it('a port in use names the address asked for and the flag or variable that set it', async () => {
    const held = await heldPort();
    try {
      const address = `127.0.0.1:${held.port}`;
      const flag = await runCli(['serve', '--config', file(), '--gateway-listen', address]);
      assert.equal(flag.code, 1);
      assert.match(
        flag.stderr,
        new RegExp(
          `gateway\\.listen: ${address} \\(set by --gateway-listen\\) is already in use by another process; stop that process or pass another value to --gateway-listen`,
        ),
      );
      assert.doesNotMatch(flag.stderr, /8545|--config/);
      const env = await runCli(['serve', '--config', file()], { env: { SWITCHYARD_API_LISTEN: address } });
      assert.equal(env.code, 1);
      assert.match(
        env.stderr,
        new RegExp(`api\\.listen: ${address} \\(set by SWITCHYARD_API_LISTEN\\) is already in use`),
      );
      assert.match(env.stderr, /set SWITCHYARD_API_LISTEN to another value/);
    } finally {
      held.release();
    }
  });
});

describe('commands that only touch the store', () => {
  it('run with an unrelated variable unset; serve names it', async () => {
    const path = config('vars.yaml', {
      data_dir: join(dir, 'vars-store'),
      smtp_url: `\${SWITCHYARD_MANNERS_SMTP_UNSET}`,
      gateway: { listen: `127.0.0.1:\${SWITCHYARD_MANNERS_PORT_UNSET}` },
    });
    const env = { SWITCHYARD_MANNERS_SMTP_UNSET: '', SWITCHYARD_MANNERS_PORT_UNSET: '' };
    const account = await runCli(['account', 'create', '--config', path], { env });
    assert.equal(account.code, 0, account.stderr);
    const id = account.stdout.trim();
    const list = await runCli(['token', 'list', '--account', id, '--config', path], { env });
    assert.equal(list.code, 0, list.stderr);
    assert.equal((await runCli(['key', 'list', '--config', path], { env })).code, 0);
    assert.equal((await runCli(['config', 'diff', '--config', path], { env })).code, 0);
    const serve = await runCli(['serve', '--config', path], { env });
    assert.equal(serve.code, 2);
    assert.match(serve.stderr, /smtp_url: refers to environment variable SWITCHYARD_MANNERS_SMTP_UNSET/);
    assert.match(serve.stderr, /gateway\.listen: refers to environment variable SWITCHYARD_MANNERS_PORT_UNSET/);
  });
});

describe('the devnet beside whatever holds its default ports', () => {
  it('takes free ports, with a warning, when devnet.base_port is unset and the default ones are held', async () => {
    const held = await heldPort();
    const lines: string[] = [];
    const devnetConfig = buildConfig(
      { devnet: { enabled: true, nodes: 1 }, networks: { sepolia: { chain_id: 11155111, pools: ['sepolia-devnet'] } } },
      'test',
    ).devnet!;
    try {
      const logger = createLogger({ level: 'warn', write: (line) => lines.push(line) });
      const devnet = await startDevnet(devnetConfig, logger, () => Date.now(), held.port);
      try {
        assert.notEqual(devnet.nodes[0]?.port, held.port);
        assert.match(lines.join(''), /the default ports are taken; the nodes listen on free ports instead/);
      } finally {
        await devnet.stop();
      }
      // An explicit base_port that is taken stays an error naming it.
      const explicit = { ...devnetConfig, base_port: held.port };
      await assert.rejects(
        startDevnet(explicit, logger, () => Date.now()),
        /devnet\.base_port \d+…\d+ is taken/,
      );
    } finally {
      held.release();
    }
  });
});
