import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { buildConfig } from './load.js';
import { changedKeys, keepRestartKeys, RESTART_KEYS } from './restart-keys.js';
import { configObject } from './schema.js';

const DOCS = join(import.meta.dirname, '..', '..', 'docs', 'configuration.md');
/** Objects of settings whose keys the table lists one by one (`gateway.websocket` as one row). */
const EXPANDED = ['gateway', 'api', 'webhooks', 'outbound', 'limits'];

/** Every key the "What reloads live" table must name, from the schema itself. */
function schemaKeys(): string[] {
  const keys: string[] = [];
  for (const [key, field] of Object.entries(configObject.shape)) {
    if (!EXPANDED.includes(key)) {
      keys.push(key);
      continue;
    }
    const inner = (field as { unwrap?: () => unknown; def: { innerType?: { shape?: object } } }).def;
    const shape = inner.innerType?.shape ?? (field as unknown as { shape: object }).shape;
    for (const name of Object.keys(shape)) keys.push(`${key}.${name}`);
  }
  return keys;
}

/** The table's rows: key → its first word (`live` or `restart`). */
function documented(): Map<string, string> {
  const text = readFileSync(DOCS, 'utf8');
  const section = text.slice(text.indexOf('## What reloads live'), text.indexOf('## Built-in offline defaults'));
  const rows = new Map<string, string>();
  for (const match of section.matchAll(/^\| `([a-z_.]+)` \| (\w+)/gm)) rows.set(match[1] as string, match[2] as string);
  return rows;
}

const base = {
  gateway: { listen: '127.0.0.1:8545', max_batch: 10 },
  networks: { one: { chain_id: 1 } },
};

describe('restart keys', () => {
  it('docs/configuration.md "What reloads live" names every key, and its class is the code\'s', () => {
    const rows = documented();
    const keys = schemaKeys();
    assert.ok(keys.includes('gateway.websocket') && keys.includes('limits.max_origins_per_pool'), 'the key list');
    assert.deepEqual(
      keys.filter((key) => !rows.has(key)),
      [],
      'keys missing from the table',
    );
    assert.deepEqual(
      [...rows.keys()].filter((key) => !keys.includes(key)),
      [],
      'rows naming no key',
    );
    const restart = new Set(RESTART_KEYS.map((key) => key.path));
    for (const [key, kind] of rows) assert.equal(kind, restart.has(key) ? 'restart' : 'live', key);
  });

  it('a reload keeps the running value of each restart key that changed, and names it', () => {
    const running = buildConfig(base, 'a');
    const next = buildConfig(
      {
        ...base,
        gateway: { listen: '127.0.0.1:9999', max_batch: 20, workers: 3 },
        data_dir: '/elsewhere',
        networks: { two: { chain_id: 2 } },
      },
      'b',
    );
    const { config, kept } = keepRestartKeys(running, next);
    assert.deepEqual(
      kept.map((key) => key.path),
      ['gateway.listen', 'data_dir', 'gateway.workers'],
    );
    assert.equal(config.gateway.listen, '127.0.0.1:8545');
    assert.equal(config.gateway.workers, 1);
    assert.equal(config.data_dir, running.data_dir);
    assert.equal(config.gateway.max_batch, 20, 'a live key takes the new value');
    assert.deepEqual(Object.keys(config.networks), ['two']);
    assert.ok(Object.isFrozen(config.gateway), 'frozen like any config');
  });

  it('turning TLS on or off is kept; a changed account keeps the trust of the running one', () => {
    // The files need only be readable for the pipeline (their contents are the reload's to check).
    const dir = mkdtempSync(join(tmpdir(), 'restart-keys-'));
    const tls = { cert_file: join(dir, 'cert.pem'), key_file: join(dir, 'key.pem') };
    writeFileSync(tls.cert_file, '');
    writeFileSync(tls.key_file, '');
    after(() => rmSync(dir, { recursive: true, force: true }));
    const running = buildConfig({ ...base, api: { tls } }, 'a');
    const next = buildConfig({ ...base, gateway: { ...base.gateway, tls }, account_id: 'a'.repeat(32) }, 'b');
    const { config, kept } = keepRestartKeys(running, next);
    assert.deepEqual(
      kept.map((key) => key.path),
      ['account_id', 'gateway.tls', 'api.tls'],
    );
    assert.equal(config.gateway.tls, undefined);
    assert.deepEqual(config.api.tls, tls);
    assert.deepEqual(config.outbound.trusted_accounts, [running.account_id]);
  });

  it("a network's own ledger settings are kept as the top-level ledger is", () => {
    const running = buildConfig(base, 'a');
    const next = buildConfig(
      { ...base, ledger: { max_pending: 7 }, networks: { one: { chain_id: 1, ledger: { enabled: false } } } },
      'b',
    );
    const { config, kept } = keepRestartKeys(running, next);
    assert.deepEqual(
      kept.map((key) => key.path),
      ['ledger', 'networks.one.ledger'],
    );
    assert.deepEqual(config.ledger, running.ledger);
    assert.deepEqual(config.networks.one?.ledger, running.networks.one?.ledger);
  });

  it('changed keys are named one level down, networks by name, values never', () => {
    const running = buildConfig({ ...base, smtp_url: 'smtp://user:secret@mail.example:587' }, 'a');
    const next = buildConfig(
      {
        ...base,
        smtp_url: 'smtp://user:other@mail.example:587',
        gateway: { ...base.gateway, max_batch: 11 },
        networks: { one: { chain_id: 1, deny_methods: ['eth_sign'] }, two: { chain_id: 2 } },
      },
      'b',
    );
    assert.deepEqual(changedKeys(running, next), ['gateway.max_batch', 'smtp_url', 'networks.one', 'networks.two']);
    assert.deepEqual(changedKeys(running, running), []);
  });
});
