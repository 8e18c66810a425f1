/**
 * Chain-incident alert types through the policies API (SPEC §14), with the official SDK and raw calls:
 * accepted with `network` and `pool_id` filters, each bad value refused 400 / 1002 naming it, and the
 * health alert's filters refused for them; `available_alerts` lists them. Runs on both store backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ApiFixture, startApiFixture } from '../api/setup.js';

const TYPES = [
  'switchyard_head_stall_alert',
  'switchyard_origin_divergence_alert',
  'switchyard_reorg_alert',
  'switchyard_finality_stall_alert',
  'switchyard_origin_integrity_alert',
];

describe('chain-incident policies', () => {
  let f: ApiFixture;
  let poolId: string;
  before(async () => {
    f = await startApiFixture({
      networks: {
        mainnet: { chain_id: 1, pools: ['main'] },
        holesky: { chain_id: 17000, pools: [] },
        goerli: { chain_id: 5, pools: [], retired_on: '2024-04-01' },
      },
      pools: [{ name: 'main', origins: [{ name: 'o', address: 'http://127.0.0.1:1' }] }],
    });
    const pools = await f.sdk.loadBalancers.pools.list({ account_id: f.accountId });
    poolId = pools.result.find((pool) => pool.name === 'main')?.id as string;
  });
  after(() => f.close());

  const policy = (alertType: string, filters: Record<string, string[]>) => ({
    name: `p ${alertType}`,
    alert_type: alertType,
    enabled: true,
    mechanisms: { email: [{ id: 'ops@example.com' }] },
    filters,
  });

  test('each type is accepted with network and pool_id filters and reads back as written', async () => {
    for (const type of TYPES) {
      const made = await f.sdk.alerting.policies.create({
        account_id: f.accountId,
        ...policy(type, { network: ['mainnet', 'holesky'], pool_id: [poolId] }),
      } as never);
      const read = await f.sdk.alerting.policies.get(made.id as string, { account_id: f.accountId });
      assert.equal(read.alert_type, type);
      assert.deepEqual(read.filters, { network: ['mainnet', 'holesky'], pool_id: [poolId] });
    }
    const omitted = await f.call('POST', `/accounts/${f.accountId}/alerting/v3/policies`, {
      body: policy('switchyard_reorg_alert', {}),
    });
    assert.equal(omitted.status, 200, 'no filter: every network of the account');
  });

  test('bad values are 400 / 1002 naming the field', async () => {
    const cases: Array<[string, Record<string, string[]>, RegExp]> = [
      ['switchyard_head_stall_alert', { network: ['nowhere'] }, /filters\.network\.0.*"nowhere"/],
      ['switchyard_head_stall_alert', { network: ['goerli'] }, /filters\.network\.0.*"goerli"/],
      ['switchyard_reorg_alert', { pool_id: ['00000000000000000000000000000000'] }, /filters\.pool_id\.0/],
      ['switchyard_reorg_alert', { new_health: ['Unhealthy'] }, /filters\.new_health.*allowed: "network", "pool_id"/],
      ['switchyard_finality_stall_alert', { network: [] }, /filters\.network/],
      ['load_balancing_health_alert', { network: ['mainnet'] }, /filters\.network/],
      ['switchyard_nonsense_alert', {}, /alert_type.*switchyard_head_stall_alert/],
    ];
    for (const [type, filters, message] of cases) {
      const res = await f.call('POST', `/accounts/${f.accountId}/alerting/v3/policies`, {
        body: policy(type, filters),
      });
      assert.equal(res.status, 400, `${type} ${JSON.stringify(filters)}`);
      assert.equal(res.body.errors[0]?.code, 1002);
      assert.match(res.body.errors[0]?.message ?? '', message);
    }
  });

  test('available_alerts (SDK) lists the health alert and the four incident types with their filters', async () => {
    const list = await f.sdk.alerting.availableAlerts.list({ account_id: f.accountId });
    assert.deepEqual(Object.keys(list).sort(), ['Load Balancing', 'Switchyard']);
    // The transaction alert (SPEC §19, test/ledger/policies.test.ts) is listed there too.
    const incidents = (list.Switchyard ?? []).filter((item) => item.type !== 'switchyard_transaction_alert');
    assert.deepEqual(
      incidents.map((item) => item.type),
      TYPES,
    );
    for (const item of incidents) {
      assert.ok(item.display_name && item.description);
      const keys = (item.filter_options as { Key: string; AvailableValues: { ID: string }[] | null }[]).map(
        (option) => [option.Key, option.AvailableValues?.map((value) => value.ID) ?? null],
      );
      assert.deepEqual(keys, [
        ['network', ['mainnet', 'holesky']],
        ['pool_id', null],
      ]);
    }
    const health = list['Load Balancing']?.[0];
    assert.equal(health?.type, 'load_balancing_health_alert');
  });
});
