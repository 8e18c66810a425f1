// The two read endpoints the console groups and lists by (SPEC §16 "console at scale"):
// `GET …/gateway/networks` — configured networks in the file's order, lifecycle and successor, pools in
// failover order with live health, nulls for a pool not created yet, nothing of the routing account's
// pools for another account; and `GET …/gateway/incidents` — the chain incidents of the account, newest
// first, filtered by status and network, each as the account's alerts show it (its own pools and origins
// only). Read-only tokens read both; another account's path is 403. Runs on both store backends.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { closeIncident, openIncident, recordOneOff } from '../../src/incidents/queries.js';
import type { IncidentScope } from '../../src/incidents/types.js';
import { poolOf } from '../helpers/app.js';
import { type ApiFixture, OTHER_ACCOUNT, startApiFixture } from './setup.js';

interface NetworkItem {
  name: string;
  chain_id: number;
  status: string;
  retired_on: string | null;
  replacement: string | null;
  pools: Array<{ name: string; id: string | null; enabled: boolean | null; healthy: boolean | null }>;
}

interface IncidentItem {
  id: string;
  network: string;
  kind: string;
  alert_type: string;
  status: string;
  closed_at: string | null;
  summary: string;
  data: { pool_ids?: string[]; origins?: string[]; hashes?: Record<string, string>; block_number?: number };
  end_data: { block_number?: number } | null;
  pools: Array<{ id: string; name: string | null }>;
}

const ORIGIN = 'http://127.0.0.1:1';

describe('gateway networks and incidents', () => {
  let f: ApiFixture;
  let ids: Map<string, string>;

  before(async () => {
    f = await startApiFixture({
      networks: {
        // Deliberately not alphabetical, so the file's order and the failover order show.
        sepolia: { chain_id: 11155111, pools: ['sepolia-primary', 'sepolia-backup', 'sepolia-later'] },
        mainnet: { chain_id: 1, pools: ['mainnet-z', 'mainnet-a'] },
        rinkeby: { chain_id: 4, pools: ['rinkeby-old'], retired_on: '2023-01-30', replacement: 'sepolia' },
        holesky: { chain_id: 17000, retired_on: '2999-01-01', replacement: 'sepolia' },
      },
      pools: [
        poolOf('sepolia-primary', [ORIGIN]),
        poolOf('sepolia-backup', [ORIGIN]),
        poolOf('mainnet-z', [ORIGIN], { enabled: false }),
        poolOf('mainnet-a', [ORIGIN]),
        poolOf('rinkeby-old', [ORIGIN]),
        poolOf('unused', [ORIGIN]),
      ],
    });
    const pools = await f.call('GET', `/accounts/${f.accountId}/load_balancers/pools?per_page=100`);
    ids = new Map((pools.body.result as Array<{ name: string; id: string }>).map((p) => [p.name, p.id]));
  });
  after(() => f?.close());

  test('networks: file order, lifecycle and successor, pools in failover order with health', async () => {
    const res = await f.call('GET', `/accounts/${f.accountId}/gateway/networks`, { token: f.readToken });
    assert.equal(res.status, 200);
    const networks = res.body.result as NetworkItem[];
    assert.deepEqual(
      networks.map((n) => [n.name, n.chain_id, n.status, n.retired_on, n.replacement]),
      [
        ['sepolia', 11155111, 'supported', null, null],
        ['mainnet', 1, 'supported', null, null],
        ['rinkeby', 4, 'retired', '2023-01-30', 'sepolia'],
        ['holesky', 17000, 'supported', '2999-01-01', 'sepolia'],
      ],
    );
    const sepolia = networks[0] as NetworkItem;
    assert.deepEqual(sepolia.pools, [
      { name: 'sepolia-primary', id: ids.get('sepolia-primary'), enabled: true, healthy: true },
      { name: 'sepolia-backup', id: ids.get('sepolia-backup'), enabled: true, healthy: true },
      { name: 'sepolia-later', id: null, enabled: null, healthy: null },
    ]);
    assert.deepEqual(
      networks[1]?.pools.map((p) => [p.name, p.enabled, p.healthy]),
      [
        ['mainnet-z', false, false],
        ['mainnet-a', true, true],
      ],
    );
    assert.deepEqual(networks[3]?.pools, []);
    assert.deepEqual(res.body.result_info, { page: 1, per_page: 1000, count: 4, total_count: 4, total_pages: 1 });
    const second = await f.call('GET', `/accounts/${f.accountId}/gateway/networks?per_page=1&page=2`);
    assert.deepEqual(
      (second.body.result as NetworkItem[]).map((n) => n.name),
      ['mainnet'],
    );
    assert.equal((await f.call('GET', `/accounts/${f.accountId}/gateway/networks?per_page=0`)).status, 400);
  });

  test('networks: another account sees the networks but none of the routing account’s pools; 403 on our path', async () => {
    const theirs = await f.call('GET', `/accounts/${OTHER_ACCOUNT}/gateway/networks`, { token: f.otherToken });
    assert.equal(theirs.status, 200);
    const networks = theirs.body.result as NetworkItem[];
    assert.equal(networks.length, 4);
    assert.ok(
      networks.every((n) => n.pools.length === 0),
      'no pool of another account',
    );
    assert.ok(!JSON.stringify(theirs.body).includes('sepolia-primary'));
    const ours = await f.call('GET', `/accounts/${f.accountId}/gateway/networks`, { token: f.otherToken });
    assert.equal(ours.status, 403);
    assert.equal(ours.body.errors[0]?.code, 10000);
    assert.equal((await f.call('GET', `/accounts/${f.accountId}/gateway/networks`, { token: null })).status, 401);
  });

  test('incidents: newest first, status and network filters, each account sees only its own part', async () => {
    const db = f.app.store.db;
    const primary = ids.get('sepolia-primary') as string;
    const backup = ids.get('sepolia-backup') as string;
    const theirPool = 'c'.repeat(32);
    const scope: IncidentScope = [
      { account_id: f.accountId, pool_id: primary, origin: 'o0' },
      { account_id: f.accountId, pool_id: backup },
      { account_id: OTHER_ACCOUNT, pool_id: theirPool, origin: 'their-node' },
    ];
    const hashes = { o0: '0xaa', 'their-node': '0xbb' };
    await openIncident(db, {
      id: 'inc-stall',
      network: 'sepolia',
      kind: 'head_stall',
      data: { network: 'sepolia', kind: 'head_stall', block_number: 7, since: '2031-01-01T00:00:00.000Z' },
      scope,
      at: '2031-01-01T00:00:10.000Z',
    });
    await closeIncident(
      db,
      'sepolia',
      'head_stall',
      { network: 'sepolia', kind: 'head_stall', block_number: 9 },
      '2031-01-01T00:01:00.000Z',
    );
    await openIncident(db, {
      id: 'inc-divergence',
      network: 'sepolia',
      kind: 'origin_divergence',
      data: { network: 'sepolia', kind: 'origin_divergence', origins: ['o0', 'their-node'], block_number: 5, hashes },
      scope,
      at: '2031-01-01T00:02:00.000Z',
    });
    await recordOneOff(db, {
      id: 'inc-reorg',
      network: 'mainnet',
      kind: 'reorg',
      data: { network: 'mainnet', kind: 'reorg', block_number: 100, depth: 3 },
      scope: [{ account_id: f.accountId, pool_id: ids.get('mainnet-a') as string }],
      at: '2031-01-01T00:03:00.000Z',
    });
    await openIncident(db, {
      id: 'inc-theirs',
      network: 'holesky',
      kind: 'head_stall',
      data: { network: 'holesky', kind: 'head_stall', block_number: 1 },
      scope: [{ account_id: OTHER_ACCOUNT, pool_id: theirPool }],
      at: '2031-01-01T00:04:00.000Z',
    });

    const path = `/accounts/${f.accountId}/gateway/incidents`;
    const all = await f.call('GET', path, { token: f.readToken });
    assert.equal(all.status, 200);
    const items = all.body.result as IncidentItem[];
    assert.deepEqual(
      items.map((i) => [i.id, i.kind, i.status]),
      [
        ['inc-reorg', 'reorg', 'closed'],
        ['inc-divergence', 'origin_divergence', 'open'],
        ['inc-stall', 'head_stall', 'closed'],
      ],
    );
    assert.equal(all.body.result_info?.total_count, 3);
    const divergence = items[1] as IncidentItem;
    assert.equal(divergence.alert_type, 'switchyard_origin_divergence_alert');
    assert.deepEqual(divergence.data.origins, ['o0'], 'only its own origins');
    assert.deepEqual(divergence.data.hashes, { o0: '0xaa' });
    assert.deepEqual(divergence.data.pool_ids, [backup, primary].sort());
    assert.deepEqual(
      divergence.pools.map((p) => p.name).sort(),
      ['sepolia-backup', 'sepolia-primary'],
      'pools by name',
    );
    assert.ok(!JSON.stringify(all.body).includes('their-node'), 'nothing of the other account');
    assert.ok(!JSON.stringify(all.body).includes(theirPool));
    assert.match(divergence.summary, /different hashes for block 5/);
    const stall = items[2] as IncidentItem;
    assert.equal(stall.closed_at, '2031-01-01T00:01:00.000Z');
    assert.equal(stall.end_data?.block_number, 9);

    const open = await f.call('GET', `${path}?status=open`);
    assert.deepEqual(
      (open.body.result as IncidentItem[]).map((i) => i.id),
      ['inc-divergence'],
    );
    const mainnet = await f.call('GET', `${path}?network=mainnet&status=closed`);
    assert.deepEqual(
      (mainnet.body.result as IncidentItem[]).map((i) => i.id),
      ['inc-reorg'],
    );
    const paged = await f.call('GET', `${path}?per_page=1&page=3`);
    assert.deepEqual(
      (paged.body.result as IncidentItem[]).map((i) => i.id),
      ['inc-stall'],
    );

    const theirs = await f.call('GET', `/accounts/${OTHER_ACCOUNT}/gateway/incidents`, { token: f.otherToken });
    assert.deepEqual(
      (theirs.body.result as IncidentItem[]).map((i) => [i.id, i.data.origins ?? null]),
      [
        ['inc-theirs', null],
        ['inc-divergence', ['their-node']],
        ['inc-stall', null],
      ],
    );
    assert.equal((await f.call('GET', path, { token: f.otherToken })).status, 403);
    const badStatus = await f.call('GET', `${path}?status=resolved`);
    assert.equal(badStatus.status, 400);
    assert.equal(badStatus.body.errors[0]?.code, 1002);
    assert.match(badStatus.body.errors[0]?.message ?? '', /^status: /);
    assert.equal((await f.call('GET', `${path}?network=Not%20a%20name`)).status, 400);
  });
});
