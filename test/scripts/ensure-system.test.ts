/**
 * `npm test` sets itself up (scripts/ensure-system.ts, scripts/apt.ts): what is missing decides which
 * packages; when apt-get may run they are installed and looked for again, else one message names them
 * and the command, and the exit status stops `npm test`. No test here runs the real apt-get: the
 * decision logic gets requirements and an installer of its own, and the spawned script finds stand-in
 * `apt-get` and `sudo` first on its PATH, which only record how they were called.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type AptAccess, aptInstall } from '../../scripts/apt.js';
import { ensureSystem, REQUIREMENTS, type Requirement } from '../../scripts/ensure-system.js';
import { REPO_ROOT } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-ensure-system-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Requirements whose presence the test sets; `install` makes the packages it is given present. */
function fakeSystem(missing: string[], access: AptAccess, installs = true) {
  const present = new Set(['postgresql-15', 'redis-server', 'chromium', 'nginx-light', 'wrk']);
  for (const name of missing) present.delete(name);
  const requirements: Requirement[] = [...present, ...missing].map((name) => ({
    package: name,
    neededFor: `the ${name} tests`,
    present: () => present.has(name),
  }));
  const calls = { access: 0, install: [] as Array<{ packages: string[]; how: string }>, log: [] as string[] };
  const status = ensureSystem({
    requirements,
    access: () => {
      calls.access += 1;
      return access;
    },
    install: (packages, how) => {
      calls.install.push({ packages: [...packages], how });
      if (installs) for (const name of packages) present.add(name);
      return installs ? 0 : 100;
    },
    log: (text) => calls.log.push(text),
  });
  return { status, calls };
}

describe('ensureSystem: what is missing → what happens', () => {
  it('everything present: exit 0, silent, and not even the apt access is looked at', () => {
    const { status, calls } = fakeSystem([], { how: 'root' });
    assert.deepEqual(
      { status, access: calls.access, install: calls.install, log: calls.log },
      {
        status: 0,
        access: 0,
        install: [],
        log: [],
      },
    );
  });

  it('missing packages as root: exactly those are installed, then found, exit 0', () => {
    const { status, calls } = fakeSystem(['redis-server', 'chromium'], { how: 'root' });
    assert.equal(status, 0);
    assert.deepEqual(calls.install, [{ packages: ['redis-server', 'chromium'], how: 'root' }]);
    assert.deepEqual(calls.log, ['npm test: installing redis-server chromium with apt-get']);
  });

  it('through passwordless sudo: installed through sudo', () => {
    const { status, calls } = fakeSystem(['wrk'], { how: 'sudo' });
    assert.equal(status, 0);
    assert.deepEqual(calls.install, [{ packages: ['wrk'], how: 'sudo' }]);
  });

  it('cannot install: nothing is run, one message names the packages, their use, the reason and the command; exit 1', () => {
    const { status, calls } = fakeSystem(['postgresql-15', 'nginx-light'], {
      how: 'none',
      why: 'not root, and sudo asks for a password',
    });
    assert.equal(status, 1);
    assert.deepEqual(calls.install, []);
    assert.equal(calls.log.length, 1);
    assert.equal(
      calls.log[0],
      [
        'npm test needs system packages that are missing (not root, and sudo asks for a password):',
        '  postgresql-15  for the postgresql-15 tests',
        '  nginx-light    for the nginx-light tests',
        'Install them, then run npm test again:',
        '  sudo apt-get update && sudo apt-get install -y --no-install-recommends postgresql-15 nginx-light',
      ].join('\n'),
    );
  });

  it('apt-get ran but a package is still missing: the message names it and apt-get’s status; exit 1', () => {
    const { status, calls } = fakeSystem(['chromium'], { how: 'root' }, false);
    assert.equal(status, 1);
    assert.equal(calls.install.length, 1);
    assert.match(calls.log[1] ?? '', /missing \(apt-get exited with status 100\):\n {2}chromium {2}for /);
    assert.match(calls.log[1] ?? '', /apt-get install -y --no-install-recommends chromium$/);
  });
});

describe('aptInstall: the commands it runs', () => {
  function recorded(how: 'root' | 'sudo', statuses: number[]) {
    const commands: string[] = [];
    const status = aptInstall(['redis-server', 'wrk'], how, (command, args) => {
      commands.push([command, ...args].join(' '));
      return statuses.shift() ?? 0;
    });
    return { status, commands };
  }

  it('as root: update, then install without recommends, non-interactive', () => {
    assert.deepEqual(recorded('root', [0, 0]), {
      status: 0,
      commands: [
        'env DEBIAN_FRONTEND=noninteractive apt-get update -qq',
        'env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server wrk',
      ],
    });
  });

  it('through sudo -n (never a password prompt); a failed update stops before the install', () => {
    assert.deepEqual(recorded('sudo', [100]), {
      status: 100,
      commands: ['sudo -n env DEBIAN_FRONTEND=noninteractive apt-get update -qq'],
    });
  });
});

describe('the script as npm test runs it', () => {
  // Stand-ins first on PATH: they record their arguments and succeed without installing anything.
  const bin = join(dir, 'bin');
  const record = join(dir, 'apt-calls.txt');
  function stubs(): void {
    mkdirSync(bin, { recursive: true });
    for (const name of ['apt-get', 'sudo']) {
      const path = join(bin, name);
      writeFileSync(path, `#!/bin/sh\necho "${name} $*" >> "${record}"\nexit 0\n`);
      chmodSync(path, 0o755);
    }
  }
  function runScript(env: NodeJS.ProcessEnv) {
    rmSync(record, { force: true });
    stubs();
    const started = performance.now();
    const result = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'scripts/ensure-system.ts')], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { ...process.env, ...env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` },
      timeout: 60_000,
    });
    const calls = existsSync(record) ? readFileSync(record, 'utf8').trim().split('\n') : [];
    return { ...result, calls, ms: performance.now() - started };
  }

  it('a package still missing after apt-get: apt-get was asked for it, the message names it, exit 1', () => {
    const result = runScript({ SWITCHYARD_REDIS_SERVER: join(dir, 'no-such-redis-server') });
    assert.equal(result.status, 1, result.stderr);
    assert.ok(
      result.calls.some((call) => /apt-get install .*--no-install-recommends .*redis-server/.test(call)),
      `apt-get was asked to install redis-server: ${result.calls.join(' | ')}`,
    );
    assert.match(result.stderr, /npm test needs system packages that are missing \(apt-get did not install them\):/);
    assert.match(result.stderr, /^ {2}redis-server +for the Redis tests/m);
  });

  const missingHere = REQUIREMENTS.filter((requirement) => !requirement.present()).map((r) => r.package);
  it('everything installed: exits 0 at once, prints nothing, runs no apt-get', {
    skip: missingHere.length > 0 && `missing on this machine: ${missingHere.join(' ')} (npm test installs them)`,
  }, () => {
    const result = runScript({});
    assert.deepEqual(
      { status: result.status, stderr: result.stderr, stdout: result.stdout, calls: result.calls },
      {
        status: 0,
        stderr: '',
        stdout: '',
        calls: [],
      },
    );
    // Node, tsx and a few file checks: a fraction of a second idle; the bound allows a loaded machine.
    assert.ok(result.ms < 10_000, `took ${Math.round(result.ms)} ms`);
  });

  it('the checks themselves are file lookups (no process started): all five well under half a second', () => {
    const started = performance.now();
    for (const requirement of REQUIREMENTS) requirement.present();
    const ms = performance.now() - started;
    assert.ok(ms < 500, `${Math.round(ms)} ms`);
  });
});
