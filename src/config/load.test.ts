import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isSwitchyardError } from '../errors/base.js';
import { DEFAULTS } from './defaults.js';
import { buildConfig, loadConfig } from './load.js';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function rejects(run: () => unknown, code: string, pattern: RegExp): void {
  assert.throws(run, (err: unknown) => {
    assert.ok(isSwitchyardError(err), String(err));
    assert.equal(err.code, code);
    assert.match(err.message, pattern);
    return true;
  });
}

describe('config pipeline', () => {
  it('fills durations from the defaults table in milliseconds', () => {
    const config = buildConfig({}, 'x');
    assert.equal(config.gateway.request_timeout, DEFAULTS.gateway.request_timeout);
    assert.equal(config.shutdown_grace, DEFAULTS.shutdown_grace);
    assert.equal(config.deprecation_notice_interval, DEFAULTS.deprecation_notice_interval);
    assert.equal(config.webhooks.timeout, DEFAULTS.webhooks.timeout);
    assert.equal(config.gateway.listen, '127.0.0.1:8545');
    assert.equal(config.api.listen, '127.0.0.1:8787');
    assert.equal(config.gateway.max_body_bytes, 1_048_576);
    assert.equal(config.gateway.max_batch, 100);
  });

  it('parses durations written as seconds or with units', () => {
    const config = buildConfig({ gateway: { request_timeout: '250ms' }, shutdown_grace: 3 }, 'x');
    assert.equal(config.gateway.request_timeout, 250);
    assert.equal(config.shutdown_grace, 3000);
  });

  it('without a file: the offline defaults (devnet sepolia, rinkeby retired)', () => {
    const config = loadConfig(undefined);
    assert.equal(config.devnet?.enabled, true);
    assert.deepEqual(config.networks.sepolia?.pools, ['sepolia-devnet']);
    assert.equal(config.networks.rinkeby?.retired_on, '2023-01-30');
    assert.equal(config.networks.rinkeby?.replacement, 'sepolia');
  });

  it('an unknown key is an error naming the key and the file', () => {
    const path = file('unknown.yaml', 'gateway:\n  listen: "127.0.0.1:1"\n  max_bodysize: 5\n');
    rejects(() => loadConfig(path), 'CONFIG_UNKNOWN_KEY', /unknown\.yaml: gateway\.max_bodysize: unknown key/);
  });

  it('a bad type is an error naming the key and the file', () => {
    const path = file('type.yaml', 'gateway:\n  max_batch: lots\n');
    rejects(() => loadConfig(path), 'CONFIG_INVALID', /type\.yaml: gateway\.max_batch: /);
  });

  it('gateway.rate_limit outside its sane bounds is an error naming the path, the range and the file', () => {
    const cases: Array<[string, RegExp]> = [
      [
        'requests_per_second: 5e-324',
        /gateway\.rate_limit\.requests_per_second: must be a number from 0\.001 to 1000000/,
      ],
      [
        'requests_per_second: 2000000',
        /gateway\.rate_limit\.requests_per_second: must be a number from 0\.001 to 1000000/,
      ],
      ['requests_per_second: .inf', /gateway\.rate_limit\.requests_per_second: must be a number from 0\.001/],
      [
        '{ requests_per_second: 1, burst: 0 }',
        /gateway\.rate_limit\.burst: must be a whole number from 1 to 1000000000/,
      ],
      ['{ requests_per_second: 1, burst: 1.5 }', /gateway\.rate_limit\.burst: must be a whole number from 1/],
      ['{ requests_per_second: 1, burst: 1e12 }', /gateway\.rate_limit\.burst: must be a whole number from 1/],
    ];
    for (const [value, pattern] of cases) {
      const limit = value.startsWith('{') ? value : `{ ${value} }`;
      const path = file('limits.yaml', `gateway:\n  rate_limit: ${limit}\n`);
      rejects(() => loadConfig(path), 'CONFIG_INVALID', new RegExp(`limits\\.yaml: ${pattern.source}`));
    }
    const edges = buildConfig({ gateway: { rate_limit: { requests_per_second: 0.001, burst: 1_000_000_000 } } }, 'x');
    assert.deepEqual(edges.gateway.rate_limit, { requests_per_second: 0.001, burst: 1_000_000_000 });
    assert.equal(
      buildConfig({ gateway: { rate_limit: { requests_per_second: 1_000_000 } } }, 'x').gateway.rate_limit
        ?.requests_per_second,
      1_000_000,
    );
  });

  it('gateway.trusted_proxies: none by default; CIDR ranges and single addresses; a bad entry is named', () => {
    assert.deepEqual(buildConfig({}, 'x').gateway.trusted_proxies, []);
    const ranges = ['10.0.0.0/8', 'fd00::/8', '192.0.2.7', '::1'];
    assert.deepEqual(buildConfig({ gateway: { trusted_proxies: ranges } }, 'x').gateway.trusted_proxies, ranges);
    const bits = () => buildConfig({ gateway: { trusted_proxies: ['10.0.0.0/8', '10.0.0.1/8'] } }, 'p.yaml');
    rejects(bits, 'CONFIG_INVALID', /p\.yaml: gateway\.trusted_proxies\.1: has address bits set past the \/8 prefix/);
    const name = () => buildConfig({ gateway: { trusted_proxies: ['lb.internal'] } }, 'p.yaml');
    rejects(name, 'CONFIG_INVALID', /gateway\.trusted_proxies\.0: must be an IPv4 or IPv6 address or range/);
  });

  it('networks.{name}.verify_anchor.origins: none by default; pool/origin or bare names; a bad entry is named', () => {
    const net = (anchor?: unknown) => ({
      networks: { n: { chain_id: 1, ...(anchor === undefined ? {} : { verify_anchor: anchor }) } },
    });
    assert.deepEqual(buildConfig(net(), 'x').networks.n?.verify_anchor.origins, []);
    const named = buildConfig(net({ origins: ['pool-a/node 1', 'b'] }), 'x').networks.n?.verify_anchor.origins;
    assert.deepEqual(named, ['pool-a/node 1', 'b']);
    rejects(() => buildConfig(net({ origins: ['a\nb'] }), 'p.yaml'), 'CONFIG_INVALID', /verify_anchor\.origins\.0/);
    rejects(() => buildConfig(net({ origins: [''] }), 'p.yaml'), 'CONFIG_INVALID', /verify_anchor\.origins\.0/);
    rejects(
      () => buildConfig(net({ origins: 'a' }), 'p.yaml'),
      'CONFIG_INVALID',
      /networks\.n\.verify_anchor\.origins/,
    );
  });

  it('networks.{name}.logs_split raises the default max_logs_block_range; an explicit one wins', () => {
    const config = buildConfig(
      {
        networks: {
          plain: { chain_id: 1 },
          split: { chain_id: 1, logs_split: {} },
          bounded: { chain_id: 1, logs_split: { chunk: 500, concurrency: 2 }, max_logs_block_range: 50_000 },
          open: { chain_id: 1, logs_split: { chunk: 10 }, max_logs_block_range: null },
        },
      },
      'x',
    );
    const { plain, split, bounded, open } = config.networks;
    assert.equal(plain?.max_logs_block_range, 10_000);
    assert.equal(plain?.logs_split, undefined);
    assert.equal(plain?.send_transactions, 'one');
    assert.equal(split?.max_logs_block_range, 1_000_000);
    assert.deepEqual(split?.logs_split, { chunk: 2_000, concurrency: 4 });
    assert.equal(bounded?.max_logs_block_range, 50_000);
    assert.deepEqual(bounded?.logs_split, { chunk: 500, concurrency: 2 });
    assert.equal(open?.max_logs_block_range, null);
    rejects(
      () => buildConfig({ networks: { n: { chain_id: 1, logs_split: { chunk: 0 } } } }, 'x'),
      'CONFIG_INVALID',
      /networks\.n\.logs_split\.chunk/,
    );
    rejects(
      () => buildConfig({ networks: { n: { chain_id: 1, send_transactions: 'some' } } }, 'x'),
      'CONFIG_INVALID',
      /networks\.n\.send_transactions/,
    );
  });

  it('a missing environment variable is an error naming the variable and the key', () => {
    const path = file('env.yaml', `database_url: \${SWITCHYARD_TEST_DB_URL_UNSET}\n`);
    rejects(
      () => loadConfig(path, { env: {} }),
      'CONFIG_ENV_MISSING',
      /env\.yaml: database_url: refers to environment variable SWITCHYARD_TEST_DB_URL_UNSET/,
    );
  });

  it('expands $ENV references, with and without a default', () => {
    const path = file('expand.yaml', `gateway:\n  listen: "127.0.0.1:\${PORT}"\ndata_dir: \${DIR:-./elsewhere}\n`);
    const config = loadConfig(path, { env: { PORT: '9999' } });
    assert.equal(config.gateway.listen, '127.0.0.1:9999');
    assert.equal(config.data_dir, './elsewhere');
    const escaped = file('escaped.yaml', `mail_from: "Ops $\${NOT_EXPANDED} <ops@example.com>"\n`);
    assert.equal(loadConfig(escaped, { env: {} }).mail_from, `Ops \${NOT_EXPANDED} <ops@example.com>`);
  });

  it('cross-field checks: replacement must be a configured network', () => {
    rejects(
      () => buildConfig({ networks: { old: { chain_id: 1, retired_on: '2020-01-01', replacement: 'nowhere' } } }, 'x'),
      'CONFIG_INVALID',
      /networks\.old\.replacement: "nowhere" is not a configured network/,
    );
  });

  it('redis_url takes a redis:// or rediss:// URL and refuses anything else without echoing it', () => {
    assert.equal(buildConfig({ redis_url: 'rediss://:pw@cache:6380/1' }, 'x').redis_url, 'rediss://:pw@cache:6380/1');
    assert.equal(buildConfig({}, 'x').redis_url, undefined);
    assert.throws(
      () => buildConfig({ redis_url: 'http://:hunter2@cache:6379' }, 'x'),
      (err: Error) =>
        /redis_url: must be a redis:\/\/ or rediss:\/\/ URL/.test(err.message) && !err.message.includes('hunter2'),
    );
  });

  it('the example of SPEC §1 loads as written, with the key names scripts rely on', () => {
    const path = file(
      'spec.yaml',
      [
        'data_dir: ./data                 # embedded store + mail outbox',
        "database_url: postgres://…       # optional; overrides data_dir's embedded database",
        'gateway: { listen: "127.0.0.1:8545" }',
        'api:     { listen: "127.0.0.1:8787" }',
        'account_id: 0123456789abcdef0123456789abcdef',
        'smtp_url: smtp://user:pass@host:587',
        'networks:',
        '  sepolia:',
        '    chain_id: 11155111',
        '    pools: [sepolia-primary, sepolia-backup]',
        '  rinkeby:',
        '    chain_id: 4',
        '    retired_on: 2023-01-30',
        '    replacement: sepolia',
        'pools:',
        '  - name: sepolia-primary',
        '    origins:',
        '      - { name: node-a, address: "http://127.0.0.1:9545" }',
        '      - { name: node-b, address: "http://127.0.0.1:9546", weight: 0.5 }',
        '    minimum_origins: 1',
        '    notification_email: ""',
        '    monitor: { type: jsonrpc, interval: 5, timeout: 2, consecutive_down: 2, consecutive_up: 1 }',
        '',
      ].join('\n'),
    );
    const config = loadConfig(path, { env: {} });
    assert.equal(config.account_id, '0123456789abcdef0123456789abcdef');
    assert.equal(config.smtp_url, 'smtp://user:pass@host:587');
    assert.deepEqual(config.networks.sepolia?.pools, ['sepolia-primary', 'sepolia-backup']);
    assert.equal(config.networks.rinkeby?.retired_on, '2023-01-30');
    assert.equal(config.pools[0]?.origins[1]?.weight, 0.5);
    assert.equal(config.pools[0]?.monitor?.type, 'jsonrpc');
    assert.equal(config.devnet, undefined, 'a config file has no devnet unless it asks for one');
  });

  it('an unknown key deep inside a network or pool is named with its path and the file', () => {
    const path = file('deep.yaml', 'networks:\n  sepolia: { chain_id: 1, pool: [a] }\n');
    rejects(
      () => loadConfig(path),
      'CONFIG_UNKNOWN_KEY',
      /deep\.yaml: networks\.sepolia\.pool: unknown key; did you mean `pools`\?/,
    );
    const pools = file(
      'pools.yaml',
      'pools:\n  - name: a\n    origins: [{ name: o, address: "http://x", wieght: 1 }]\n',
    );
    rejects(
      () => loadConfig(pools),
      'CONFIG_UNKNOWN_KEY',
      /pools\.yaml: pools\.0\.origins\.0\.wieght: unknown key; did you mean `weight`\?/,
    );
  });

  it('a cross-field error names the file', () => {
    const path = file('cross.yaml', 'gateway: { listen: "127.0.0.1:9000" }\napi: { listen: "127.0.0.1:9000" }\n');
    rejects(() => loadConfig(path), 'CONFIG_INVALID', /cross\.yaml: gateway\.listen: must differ from api\.listen/);
  });

  it('devnet.alert_email: operator@localhost by default, "" allowed, anything else must be an address', () => {
    assert.equal(
      buildConfig({ devnet: { enabled: true }, networks: { sepolia: { chain_id: 1, pools: ['sepolia-devnet'] } } }, 'x')
        .devnet?.alert_email,
      'operator@localhost',
    );
    assert.equal(buildConfig({ devnet: { alert_email: '' } }, 'x').devnet?.alert_email, '');
    rejects(
      () => buildConfig({ devnet: { alert_email: 'nobody' } }, 'x'),
      'CONFIG_INVALID',
      /x: devnet\.alert_email: must be an email address/,
    );
  });

  it('an unreadable TLS file is an error naming the key and the file', () => {
    const path = file(
      'tls.yaml',
      'api: { tls: { cert_file: /nonexistent/cert.pem, key_file: /nonexistent/key.pem } }\n',
    );
    rejects(
      () => loadConfig(path),
      'CONFIG_INVALID',
      /tls\.yaml: 2 problems in the configuration:\napi\.tls\.cert_file: cannot read "\/nonexistent\/cert\.pem" \(ENOENT\)\napi\.tls\.key_file: cannot read/,
    );
  });

  it('the config is frozen', () => {
    const config = buildConfig({}, 'x');
    assert.ok(Object.isFrozen(config.gateway));
  });
});

describe('outbound.trusted_accounts', () => {
  it('defaults to the routing account, and takes a list of account ids', () => {
    const account = '0123456789abcdef0123456789abcdef';
    assert.deepEqual(buildConfig({ account_id: account }, 'x').outbound.trusted_accounts, [account]);
    assert.deepEqual(buildConfig({}, 'x').outbound.trusted_accounts, [DEFAULTS.account_id]);
    assert.deepEqual(buildConfig({ outbound: { trusted_accounts: [] } }, 'x').outbound.trusted_accounts, []);
    rejects(() => buildConfig({ outbound: { trusted_accounts: ['nope'] } }, 'x'), 'CONFIG_INVALID', /trusted_accounts/);
    rejects(() => buildConfig({ outbound: { trusted: [] } }, 'x'), 'CONFIG_UNKNOWN_KEY', /outbound\.trusted/);
  });

  it('config pools (the routing account) may use loopback, never link-local or metadata targets', () => {
    const pool = (address: string) => ({ pools: [{ name: 'p', origins: [{ name: 'o', address }] }] });
    assert.equal(buildConfig(pool('http://127.0.0.1:9545'), 'x').pools.length, 1);
    rejects(
      () => buildConfig(pool('http://169.254.169.254/'), 'x'),
      'CONFIG_INVALID',
      /pools\.0\.origins\.0\.address: target not allowed: host 169\.254\.169\.254 is a link-local address/,
    );
    rejects(() => buildConfig(pool('metadata.google.internal:80'), 'x'), 'CONFIG_INVALID', /cloud metadata/);
    rejects(
      () => buildConfig({ ...pool('127.0.0.1:9545'), outbound: { trusted_accounts: [] } }, 'x'),
      'CONFIG_INVALID',
      /loopback address \(allowed only for accounts in outbound\.trusted_accounts\)/,
    );
  });
});
