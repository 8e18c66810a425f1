import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PoolHealthReport } from '../../health/report.js';
import type { Origin, Pool } from '../../model/pool.js';
import type { PoolHealthSource } from '../health-source.js';
import { PoolJsonCache, poolView } from './pool-view.js';

const text = (chunks: Buffer[]) => Buffer.concat(chunks).toString('utf8');

/** Health from a table the test flips: `down` holds "poolId/originName" of unhealthy origins. */
class TableHealth implements PoolHealthSource {
  readonly down = new Set<string>();
  originHealthy(pool: Pool, origin: Origin): boolean {
    return pool.enabled && origin.enabled && !this.down.has(`${pool.id}/${origin.name}`);
  }
  poolHealthy(pool: Pool): boolean {
    const healthy = pool.origins.filter((origin) => this.originHealthy(pool, origin)).length;
    return pool.enabled && healthy > 0 && healthy >= pool.minimum_origins;
  }
  report(pool: Pool): PoolHealthReport {
    return { pool_id: pool.id, pop_health: {} } as PoolHealthReport;
  }
}

const plain: Pool = {
  id: 'a'.repeat(32),
  account_id: 'f'.repeat(32),
  name: 'plain',
  description: '',
  enabled: true,
  minimum_origins: 1,
  monitor: null,
  notification_email: '',
  notification_filter: null,
  origins: [{ name: 'o1', address: '127.0.0.1:8545', enabled: true, weight: 1, header: {}, archive: false }],
  origin_steering: { policy: 'random' },
  check_regions: null,
  created_on: '2026-01-01T00:00:00.000Z',
  modified_on: '2026-01-01T00:00:00.000Z',
};

/** Every optional field set, secrets in addresses and headers, characters JSON must escape. */
const full: Pool = {
  id: 'b'.repeat(32),
  account_id: 'f'.repeat(32),
  name: 'fülle "quoted" \\ pool',
  description: 'line\nbreak \u2028 ✓',
  enabled: false,
  disabled_at: '2026-01-02T00:00:00.000Z',
  minimum_origins: 2,
  monitor: 'c'.repeat(32),
  notification_email: 'ops@example.com',
  notification_filter: { origin: { disable: true }, pool: null },
  origins: [
    {
      name: 'keyed',
      address: 'https://user:pw@node.example:8443/v3/0123456789abcdef0123456789abcdef?apikey=s3cret&x',
      enabled: true,
      weight: 0.5,
      header: { 'X-Api-Key': ['k1', 'k2'], Host: ['node.example'] },
      archive: true,
      ws_address: 'wss://node.example/ws/0123456789abcdef0123456789abcdef',
    },
    {
      name: 'off',
      address: 'http://10.0.0.1:8545',
      enabled: false,
      weight: 1,
      header: {},
      disabled_at: '2026-01-03T00:00:00.000Z',
    },
  ],
  origin_steering: { policy: 'least_connections' },
  check_regions: ['WEU', 'ENAM'],
  latitude: 52.5,
  longitude: 13.4,
  load_shedding: { default_percent: 0, default_policy: 'random', session_percent: 0, session_policy: 'hash' },
  created_on: '2026-01-01T00:00:00.000Z',
  modified_on: '2026-01-04T00:00:00.000Z',
};

const many: Pool = {
  ...plain,
  id: 'd'.repeat(32),
  name: 'many',
  minimum_origins: 3,
  origins: Array.from({ length: 4 }, (_, i) => ({ ...plain.origins[0], name: `o${i}` }) as Origin),
};

function expected(pools: readonly Pool[], health: PoolHealthSource, networks: (pool: Pool) => string[]): string {
  return JSON.stringify(pools.map((pool) => poolView(pool, health, networks(pool))));
}

test('the list text is JSON.stringify of the pools’ views, byte for byte, as health and networks change', () => {
  const cache = new PoolJsonCache();
  const health = new TableHealth();
  let networks = (_pool: Pool): string[] => [];
  const pools = [plain, full, many];
  const check = (what: string) =>
    assert.equal(text(cache.list(pools, health, networks)), expected(pools, health, networks), what);
  check('first listing');
  check('second listing, from the cache');
  health.down.add(`${many.id}/o1`);
  check('one origin down: pool still up');
  health.down.add(`${many.id}/o2`);
  check('two down: pool below minimum_origins');
  health.down.clear();
  check('all up again');
  networks = (pool) => (pool.name === 'plain' ? ['mainnet', 'sepolia'] : []);
  check('networks changed');
  assert.equal(text(cache.list([], health, networks)), '[]');
  assert.equal(
    text(cache.list([many, plain], health, networks)),
    expected([many, plain], health, networks),
    'other order',
  );
});

test('secrets stay masked in the list text', () => {
  const listed = text(new PoolJsonCache().list([full], new TableHealth(), () => []));
  for (const secret of ['user', 's3cret', '0123456789abcdef0123456789abcdef', 'k1', 'k2']) {
    assert.equal(listed.includes(secret), false, secret);
  }
  assert.match(listed, /"address":"https:\/\/\*\*\*:\*\*\*@node\.example:8443\/v3\/\*\*\*\?apikey=\*\*\*&\*\*\*"/);
});
