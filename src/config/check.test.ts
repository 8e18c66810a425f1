// The config pipeline reports every problem at once (with "did you mean"), its warnings, the
// command-line and SWITCHYARD_* overrides (flags > environment > file > defaults), and `only`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { checkConfig, loadConfig } from './load.js';
import { problemLine } from './problems.js';
import { closest, editDistance } from './suggest.js';
import { configWarnings } from './warnings.js';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-check-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

const EIGHT_MISTAKES = [
  'gatway: { listen: "127.0.0.1:0" }', // unknown top-level key
  'api: { lisen: "127.0.0.1:0", max_body_bytes: lots }', // unknown nested key, bad type
  `smtp_url: \${SWITCHYARD_CHECK_TEST_UNSET}`, // unset variable
  'networks:',
  '  Mainnet: { chain_id: 1 }', // a network name that is not allowed
  '  sepolia: { chain_id: 11155111, pools: [primary, bakup] }',
  '  goerli: { chain_id: 5, retired_on: 2024-01-01, replacement: sepola }', // replacement misspelt
  'pools:',
  '  - { name: primary, origins: [{ name: a, address: "http://127.0.0.1:1", wieght: 1 }] }', // origin key
  '  - { name: backup, origins: [{ name: b, address: "http://127.0.0.1:2" }] }',
  '  - { name: backup, origins: [{ name: c, address: "http://127.0.0.1:3" }] }', // declared twice
];

describe('config check: every problem at once', () => {
  it('lists each mistake with its path and a suggestion, schema and cross-field problems together', () => {
    const checked = checkConfig(file('eight.yaml', EIGHT_MISTAKES), { env: {} });
    assert.equal(checked.config, undefined);
    const lines = checked.errors.map(problemLine);
    const expected = [
      /^gatway: unknown key; did you mean `gateway`\?$/,
      /^api\.lisen: unknown key; did you mean `listen`\?$/,
      /^api\.max_body_bytes: .*expected number/,
      /^smtp_url: refers to environment variable SWITCHYARD_CHECK_TEST_UNSET, which is not set/,
      /^networks\.Mainnet: "Mainnet" is not allowed as a name: .*; did you mean `mainnet`\?$/,
      /^networks\.goerli\.replacement: "sepola" is not a configured network; did you mean `sepolia`\?$/,
      /^pools\.0\.origins\.0\.wieght: unknown key; did you mean `weight`\?$/,
      /^pools\.2\.name: pool "backup" is declared twice$/,
    ];
    for (const pattern of expected)
      assert.ok(
        lines.some((line) => pattern.test(line)),
        `${pattern}\n${lines.join('\n')}`,
      );
    assert.equal(lines.length, expected.length, lines.join('\n'));
    // loadConfig fails with the same list, one problem per line after the file's name.
    assert.throws(
      () => loadConfig(join(dir, 'eight.yaml'), { env: {} }),
      (err: Error) =>
        err.message.startsWith(`${join(dir, 'eight.yaml')}: 8 problems`) && lines.every((l) => err.message.includes(l)),
    );
  });

  it('warns of a network naming a pool that exists nowhere (suggesting one) and of a pool no network uses', () => {
    const checked = checkConfig(
      file('warn.yaml', [
        'networks:',
        '  sepolia: { chain_id: 11155111, pools: [primary, bakup, from-api] }',
        'pools:',
        '  - { name: primary, origins: [{ name: a, address: "http://127.0.0.1:1" }] }',
        '  - { name: backup, origins: [{ name: b, address: "http://127.0.0.1:2" }] }',
        '  - { name: spare, origins: [{ name: c, address: "http://127.0.0.1:3" }] }',
      ]),
      { env: {} },
    );
    assert.deepEqual(checked.errors, []);
    const lines = configWarnings(checked.parts!, ['from-api']).map(problemLine);
    assert.deepEqual(lines, [
      'networks.sepolia.pools.1: pool "bakup" is neither in the file nor in the store; the network answers 503 for it until one of that name exists; did you mean `backup`?',
      'pools.1: pool "backup" is not used by any network',
      'pools.2: pool "spare" is not used by any network',
    ]);
    // A pool of that name in the store is no warning; the devnet's own pool is declared.
    assert.deepEqual(
      configWarnings(checkConfig(undefined).parts!, []),
      [],
      'the built-in demo has nothing to warn about',
    );
  });

  it('a YAML syntax error names its line', () => {
    const checked = checkConfig(file('syntax.yaml', ['networks:', '  sepolia: {chain_id: 1', 'pools: []']));
    assert.match(problemLine(checked.errors[0]!), /^line \d+: not valid YAML: /);
    assert.equal(checked.parts, undefined);
  });
});

describe('suggestions', () => {
  it('edit distance counts insertions, deletions, substitutions and swaps; 3 and more is no suggestion', () => {
    assert.equal(editDistance('listen', 'lisen'), 1);
    assert.equal(editDistance('weight', 'wieght'), 1);
    assert.equal(editDistance('sepolia', 'spelioa'), 3);
    assert.equal(closest('sepola', ['mainnet', 'sepolia']), 'sepolia');
    assert.equal(closest('holesky', ['mainnet', 'sepolia']), undefined);
    assert.equal(closest('pools', ['pools']), undefined, 'never the word itself');
  });
});

describe('overrides: flags > environment > file > defaults', () => {
  const withListen = () =>
    file('listen.yaml', [
      'gateway: { listen: "127.0.0.1:7001" }',
      'api: { listen: "127.0.0.1:7002" }',
      'data_dir: ./from-file',
    ]);

  it('the file wins over the defaults, the environment over the file, the flags over both', () => {
    const path = withListen();
    const fromFile = checkConfig(path, { env: {} });
    assert.equal(fromFile.config?.gateway.listen, '127.0.0.1:7001');
    assert.equal(fromFile.sources['gateway.listen'].label, `gateway.listen in ${path}`);
    const env = {
      SWITCHYARD_GATEWAY_LISTEN: '127.0.0.1:7101',
      SWITCHYARD_API_LISTEN: '127.0.0.1:7102',
      SWITCHYARD_DATA_DIR: './from-env',
    };
    const fromEnv = checkConfig(path, { env });
    assert.equal(fromEnv.config?.gateway.listen, '127.0.0.1:7101');
    assert.equal(fromEnv.config?.api.listen, '127.0.0.1:7102');
    assert.equal(fromEnv.config?.data_dir, './from-env');
    assert.equal(fromEnv.sources['api.listen'].label, 'SWITCHYARD_API_LISTEN');
    const settings = { gatewayListen: '127.0.0.1:7201', dataDir: './from-flag' };
    const fromFlags = checkConfig(path, { env, settings });
    assert.equal(fromFlags.config?.gateway.listen, '127.0.0.1:7201');
    assert.equal(fromFlags.config?.api.listen, '127.0.0.1:7102', 'no flag: the environment still wins over the file');
    assert.equal(fromFlags.config?.data_dir, './from-flag');
    assert.equal(fromFlags.sources['gateway.listen'].label, '--gateway-listen');
  });

  it('apply to the built-in defaults too, and an empty variable counts as unset', () => {
    const demo = checkConfig(undefined, {
      env: { SWITCHYARD_GATEWAY_LISTEN: '127.0.0.1:8645', SWITCHYARD_API_LISTEN: '' },
    });
    assert.equal(demo.config?.gateway.listen, '127.0.0.1:8645');
    assert.equal(demo.config?.api.listen, '127.0.0.1:8787');
    assert.equal(demo.config?.devnet?.enabled, true);
    assert.equal(demo.sources['api.listen'].kind, 'default');
  });

  it('a bad value is reported under the flag or variable that gave it', () => {
    const checked = checkConfig(withListen(), {
      env: { SWITCHYARD_API_LISTEN: 'nowhere' },
      settings: { gatewayListen: '8545' },
    });
    const lines = checked.errors.map(problemLine);
    assert.deepEqual(lines, ['--gateway-listen: must be "host:port"', 'SWITCHYARD_API_LISTEN: must be "host:port"']);
  });
});

describe('only: commands that need a few keys', () => {
  it('ignore an unset variable in the keys they do not read', () => {
    const path = file('store-only.yaml', ['data_dir: ./store-here', `smtp_url: \${SWITCHYARD_CHECK_SMTP_UNSET}`]);
    assert.throws(() => loadConfig(path, { env: {} }), /SWITCHYARD_CHECK_SMTP_UNSET/);
    const config = loadConfig(path, { env: {}, only: ['data_dir', 'database_url'] });
    assert.equal(config.data_dir, './store-here');
    assert.equal(config.smtp_url, undefined);
  });
});
