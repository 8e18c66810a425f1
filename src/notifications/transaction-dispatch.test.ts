import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { TransactionAlertData } from '../ledger/types.js';
import type { Policy } from './queries/alert-policies.js';
import { transactionPolicyMatches } from './transaction-dispatch.js';

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
