/**
 * `switchyard_transaction_alert` as policies see it (SPEC §19): listed by `available_alerts` under
 * "Switchyard" with its filters (`status` values given); filters `network`, `key_id` and `status` are
 * checked (an unknown value is 400 / 1002 naming it, `key_id` must be a key of the account); a key deleted
 * since may stay in the policy on PUT. On both store backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ApiFixture, startApiFixture } from '../api/setup.js';

describe('transaction alert policies', () => {
  let f: ApiFixture;
  let acct: (path: string) => string;
  let keyId: string;
  const policy = (filters: Record<string, string[]>) => ({
    name: 'transactions',
    alert_type: 'switchyard_transaction_alert',
    enabled: true,
    mechanisms: { email: [{ id: 'ops@example.com' }] },
    filters,
  });

  before(async () => {
    f = await startApiFixture({ networks: { sepolia: { chain_id: 11155111, pools: [] } } });
    acct = (path) => `/accounts/${f.accountId}${path}`;
    keyId = ((await f.call('POST', acct('/gateway/keys'), { body: { name: 'k' } })).body.result as { id: string }).id;
  });
  after(async () => {
    await f?.close();
  });

  it('is listed under Switchyard with network, key_id and status', async () => {
    const { body } = await f.call('GET', acct('/alerting/v3/available_alerts'));
    const item = (
      body.result as Record<string, Array<{ type: string; filter_options: Array<Record<string, unknown>> }>>
    ).Switchyard?.find((entry) => entry.type === 'switchyard_transaction_alert');
    assert.ok(item);
    assert.deepEqual(
      item.filter_options.map((option) => [option.Key, option.AvailableValues]),
      [
        ['network', [{ ID: 'sepolia', Name: 'sepolia' }]],
        ['key_id', null],
        [
          'status',
          ['dropped', 'replaced', 'reorged', 'included', 'final'].map((value) => ({ ID: value, Name: value })),
        ],
      ],
    );
  });

  it('checks each filter; a key deleted since stays on PUT', async () => {
    const refusals: Array<[Record<string, string[]>, string]> = [
      [{ status: ['pending'] }, 'filters.status.0'],
      [{ status: ['dropped', 'lost'] }, 'filters.status.1'],
      [{ network: ['mainnet'] }, 'filters.network.0'],
      [{ key_id: ['0'.repeat(32)] }, 'filters.key_id.0'],
      [{ pool_id: ['x'] }, 'filters.pool_id'],
    ];
    for (const [filters, field] of refusals) {
      const { status, body } = await f.call('POST', acct('/alerting/v3/policies'), { body: policy(filters) });
      assert.equal(status, 400, JSON.stringify(filters));
      assert.equal(body.errors[0]?.code, 1002);
      assert.ok(body.errors[0]?.message.startsWith(field), body.errors[0]?.message);
    }
    const made = await f.call('POST', acct('/alerting/v3/policies'), {
      body: policy({ network: ['sepolia'], key_id: [keyId], status: ['dropped', 'replaced'] }),
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const id = (made.body.result as { id: string }).id;
    await f.call('DELETE', acct(`/gateway/keys/${keyId}`));
    const renamed = await f.call('PUT', acct(`/alerting/v3/policies/${id}`), { body: { name: 'renamed' } });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
  });
});
