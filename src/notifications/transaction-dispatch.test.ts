import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { TransactionAlertData } from '../ledger/types.js';
import type { Policy } from './queries/alert-policies.js';
import { transactionPolicyMatches } from './transaction-dispatch.js';
import { transactionEmail, transactionSummary, transactionWebhookBody } from './transaction-messages.js';

const data: TransactionAlertData = {
  network: 'sepolia',
  hash: `0x${'1'.repeat(64)}`,
  from: `0x${'2'.repeat(40)}`,
  nonce: 3,
  status: 'dropped',
  previous_status: 'pending',
  block_number: null,
  block_hash: null,
  replaced_by: null,
  key_id: 'k'.repeat(32),
};

function policy(filters: Record<string, string[]>, extra: Partial<Policy> = {}): Policy {
  return {
    id: 'p',
    account_id: 'a',
    name: 'p',
    description: '',
    enabled: true,
    alert_type: 'switchyard_transaction_alert',
    mechanisms: {},
    filters,
    alert_interval: null,
    created: '',
    modified: '',
    ...extra,
  };
}

it('a transaction policy matches when every filter it has contains the change', () => {
  assert.equal(transactionPolicyMatches(policy({}), data), true);
  assert.equal(transactionPolicyMatches(policy({ status: ['dropped', 'replaced'] }), data), true);
  assert.equal(transactionPolicyMatches(policy({ status: ['included'] }), data), false);
  assert.equal(transactionPolicyMatches(policy({ network: ['holesky'] }), data), false);
  assert.equal(transactionPolicyMatches(policy({ key_id: [data.key_id as string] }), data), true);
  assert.equal(transactionPolicyMatches(policy({ key_id: ['x'.repeat(32)] }), data), false);
  assert.equal(transactionPolicyMatches(policy({ key_id: ['x'.repeat(32)] }), { ...data, key_id: null }), false);
  assert.equal(transactionPolicyMatches(policy({}, { enabled: false }), data), false);
  assert.equal(transactionPolicyMatches(policy({}, { alert_type: 'switchyard_reorg_alert' }), data), false);
});

it('the alert reads the same in a webhook and an email: summary, data, a one-off START, a link to the record', () => {
  const alert = { accountId: 'a'.repeat(32), correlationId: 'c-1', data, at: '2026-05-10T12:00:00.000Z' };
  const policy = { id: 'p1', name: 'ops', account_id: 'a'.repeat(32) };
  const body = JSON.parse(transactionWebhookBody(alert, policy)) as Record<string, unknown>;
  assert.deepEqual(
    { ...body, text: undefined },
    {
      name: 'ops',
      text: undefined,
      data,
      ts: 1_778_414_400,
      account_id: 'a'.repeat(32),
      policy_id: 'p1',
      policy_name: 'ops',
      alert_type: 'switchyard_transaction_alert',
      alert_correlation_id: 'c-1',
      alert_event: 'ALERT_STATE_EVENT_START',
    },
  );
  assert.equal(body.text, transactionSummary(data));
  assert.match(transactionSummary(data), /^Transaction 0x1{64} on network "sepolia" was dropped$/);
  const mail = transactionEmail(alert, policy, 'http://api/client/v4');
  assert.match(mail.subject, /^\[Switchyard\] Transaction 0x11111111…1111 dropped on sepolia$/);
  assert.match(mail.text, /Status: +dropped \(was pending\)/);
  assert.match(mail.text, new RegExp(`http://api/client/v4/accounts/a{32}/gateway/transactions/${data.hash}`));
  assert.match(mail.text, /policies\/p1/);
});
