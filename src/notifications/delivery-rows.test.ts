import assert from 'node:assert/strict';
import { test } from 'node:test';
import { messageIdOf, newDelivery, policyAlertRows } from './delivery-rows.js';
import type { Policy } from './queries/alert-policies.js';

const policy = (mechanisms: Policy['mechanisms']): Policy => ({
  id: 'p1',
  account_id: 'a'.repeat(32),
  name: 'ops',
  description: 'the ops team',
  enabled: true,
  alert_type: 'load_balancing_health_alert',
  mechanisms,
  filters: {},
  alert_interval: null,
  created: '2026-03-01T00:00:00.000Z',
  modified: '2026-03-01T00:00:00.000Z',
});

test("a policy's alert is one row per address, then per destination, each with its own ids", () => {
  let mails = 0;
  const rows = policyAlertRows({
    accountId: 'a'.repeat(32),
    eventId: 'e1',
    policy: policy({ email: [{ id: 'Ops@Example.com' }, { id: 'b@example.com' }], webhooks: [{ id: 'd1' }] }),
    alertType: 'load_balancing_health_alert',
    key: 'alert:e1:p1',
    createdAt: '2026-03-01T00:00:00.000Z',
    mail: () => {
      mails += 1;
      return { subject: 'down', text: 'pool p is down' };
    },
    webhook: () => ({ text: 'p is down', body: '{"text":"p is down"}' }),
  });
  assert.equal(mails, 1, 'the email is made once for every address');
  assert.deepEqual(
    rows.map((row) => [row.mechanism_type, row.mechanism, row.dedupe_key]),
    [
      ['email', 'Ops@Example.com', 'alert:e1:p1:email:ops@example.com'],
      ['email', 'b@example.com', 'alert:e1:p1:email:b@example.com'],
      ['webhook', 'd1', 'alert:e1:p1:webhook:d1'],
    ],
  );
  for (const row of rows) {
    assert.equal(row.message_id, messageIdOf(row.id));
    assert.match(row.message_id, /^msg_[0-9a-f]{32}$/);
    assert.equal(row.kind, 'policy_alert');
    assert.equal(row.policy_id, 'p1');
    assert.equal(row.event_id, 'e1');
  }
  assert.equal(new Set(rows.map((row) => row.id)).size, 3);
  assert.deepEqual(rows[0]?.payload, {
    name: 'ops',
    description: 'the ops team',
    alert_type: 'load_balancing_health_alert',
    subject: 'down',
    text: 'pool p is down',
  });
  assert.deepEqual(rows[2]?.payload, {
    name: 'ops',
    description: 'the ops team',
    alert_type: 'load_balancing_health_alert',
    text: 'p is down',
    body: '{"text":"p is down"}',
  });
});

test('content is only made for the mechanisms the policy has', () => {
  const rows = policyAlertRows({
    accountId: 'a'.repeat(32),
    eventId: 'e1',
    policy: policy({ webhooks: [{ id: 'd1' }] }),
    alertType: 'x',
    key: 'k',
    createdAt: '2026-03-01T00:00:00.000Z',
    mail: () => assert.fail('no address: no email'),
    webhook: () => ({ text: 't', body: '{}' }),
  });
  assert.equal(rows.length, 1);
  const { id: _id, message_id: _message, ...fields } = rows[0] as (typeof rows)[0];
  const again = newDelivery(fields);
  assert.notEqual(again.id, rows[0]?.id, 'a fresh id every time');
  assert.equal(again.message_id, messageIdOf(again.id));
});
