// The origins view's layout rules (src/console/layout.ts), without a browser: sections in the config's
// order with retired networks after and unused pools last, pools in failover order with their roles,
// the filter by pool, origin and network name, and the collapsed summary.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { filterSections, layoutSections, poolCount, sectionSummary } from '../../src/console/layout.js';
import type { NetworkItem, OriginRow } from '../../src/console/types.js';

function origin(poolId: string, poolName: string, name: string, healthy = true, enabled = true): OriginRow {
  return {
    pool_id: poolId,
    pool_name: poolName,
    networks: [],
    origin_name: name,
    enabled,
    healthy,
    failure_reason: healthy ? '' : 'connection refused',
    head: null,
    lag: null,
    earliest_block: null,
    syncing: false,
    requests: 0,
    errors: 0,
    requests_per_second: 0,
    error_rate: 0,
    p50_ms: null,
  };
}

const entry = (name: string, id: string | null, healthy: boolean | null = true, enabled: boolean | null = true) => ({
  name,
  id,
  enabled: id === null ? null : enabled,
  healthy: id === null ? null : healthy,
});

const NETWORKS: NetworkItem[] = [
  {
    name: 'rinkeby',
    chain_id: 4,
    status: 'retired',
    retired_on: '2023-01-30',
    replacement: 'sepolia',
    pools: [entry('old', 'p-old')],
  },
  {
    name: 'sepolia',
    chain_id: 11155111,
    status: 'supported',
    retired_on: null,
    replacement: null,
    pools: [
      entry('primary', 'p-primary', false),
      entry('later', null),
      entry('backup', 'p-backup'),
      entry('off', 'p-off', false, false),
      entry('extra', 'p-extra'),
    ],
  },
  { name: 'mainnet', chain_id: 1, status: 'supported', retired_on: null, replacement: null, pools: [] },
];

const STATS: OriginRow[] = [
  origin('p-aaa', 'aaa-unused', 'n1', false),
  origin('p-backup', 'backup', 'b1'),
  origin('p-extra', 'extra', 'archive-node'),
  origin('p-off', 'off', 'x1', false),
  origin('p-old', 'old', 'o1'),
  origin('p-primary', 'primary', 'a1', false),
  origin('p-primary', 'primary', 'a2', false),
];

describe('console layout', () => {
  test('supported networks in config order, then retired, then the pools no network uses', () => {
    const sections = layoutSections(NETWORKS, STATS);
    assert.deepEqual(
      sections.map((s) => s.key),
      ['network:sepolia', 'network:mainnet', 'network:rinkeby', 'unused'],
    );
    assert.deepEqual(
      sections[3]?.pools.map((p) => [p.name, p.role, p.position]),
      [['aaa-unused', 'unhealthy', null]],
    );
    assert.equal(poolCount(sections), 6);
  });

  test('pools in failover order: the first healthy one serves, later ones stand by; nothing serves a retired network', () => {
    const [sepolia, , rinkeby] = layoutSections(NETWORKS, STATS);
    assert.deepEqual(
      sepolia?.pools.map((p) => [p.position, p.name, p.role, p.origins.length]),
      [
        [1, 'primary', 'unhealthy', 2],
        [2, 'later', 'missing', 0],
        [3, 'backup', 'serving', 1],
        [4, 'off', 'disabled', 1],
        [5, 'extra', 'standby', 1],
      ],
    );
    assert.deepEqual(
      rinkeby?.pools.map((p) => p.role),
      ['healthy'],
    );
  });

  test('the filter keeps pools by pool, origin or network name, in any case', () => {
    const sections = layoutSections(NETWORKS, STATS);
    const names = (query: string) =>
      filterSections(sections, query).map((s) => [s.key, s.pools.map((p) => p.name)] as const);
    assert.deepEqual(names('BACK'), [['network:sepolia', ['backup']]]);
    assert.deepEqual(names('archive'), [['network:sepolia', ['extra']]]);
    assert.deepEqual(names('rinkeby'), [['network:rinkeby', ['old']]]);
    assert.deepEqual(names('mainnet'), [['network:mainnet', []]]);
    assert.deepEqual(names('nothing'), []);
    assert.equal(filterSections(sections, '  ').length, 4);
  });

  test('a collapsed section sums up: pools, which serves, origins down (not those of a disabled pool)', () => {
    const [sepolia, mainnet, rinkeby] = layoutSections(NETWORKS, STATS);
    assert.equal(sectionSummary(sepolia!), '4 pools · 1 not created yet · serving from backup · 2 origins unhealthy');
    assert.equal(sectionSummary(mainnet!), '0 pools · no pool serving · every enabled origin healthy');
    assert.equal(sectionSummary(rinkeby!), '1 pool · every enabled origin healthy');
  });
});
