import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SwitchyardError } from '../../errors/base.js';
import { parseSubscribeParams, sourceKey } from './params.js';

const A = `0x${'ab'.repeat(20)}`;
const B = `0x${'0c'.repeat(20)}`;
const T1 = `0x${'11'.repeat(32)}`;
const T2 = `0x${'2f'.repeat(32)}`;

function refused(params: unknown, pattern: RegExp): void {
  assert.throws(
    () => parseSubscribeParams(params),
    (err: unknown) =>
      err instanceof SwitchyardError &&
      err.code === 'RPC_INVALID_PARAMS' &&
      err.spec.rpc === -32602 &&
      pattern.test(err.message),
  );
}

test('the three kinds are read; full pending transactions and unknown names are refused with -32602', () => {
  assert.deepEqual(parseSubscribeParams(['newHeads']), { kind: 'newHeads' });
  assert.deepEqual(parseSubscribeParams(['newPendingTransactions']), { kind: 'newPendingTransactions' });
  assert.deepEqual(parseSubscribeParams(['newPendingTransactions', false]), { kind: 'newPendingTransactions' });
  assert.deepEqual(parseSubscribeParams(['logs']), { kind: 'logs', filter: { address: [], topics: [] } });
  refused(['newPendingTransactions', true], /full transactions/);
  refused(['syncing'], /no "syncing" subscription/);
  refused([], /subscription name/);
  refused({ 0: 'newHeads' }, /subscription name/);
  refused(['newHeads', {}], /no further params/);
});

test('a logs filter is normalised: addresses and topics lowercase, sorted, unique; wildcards as null', () => {
  const request = parseSubscribeParams([
    'logs',
    {
      address: [B.toUpperCase().replace('0X', '0x'), A, B],
      topics: [[T2, T1.toUpperCase().replace('0X', '0x')], null, [], [T1, null]],
    },
  ]);
  assert.deepEqual(request, { kind: 'logs', filter: { address: [B, A].sort(), topics: [[T1, T2]] } });
  const single = parseSubscribeParams(['logs', { address: A, topics: [T1, null, T2] }]);
  assert.deepEqual(single, { kind: 'logs', filter: { address: [A], topics: [[T1], null, [T2]] } });
});

test('filters that match the same logs share a source key; other filters and networks do not', () => {
  const one = sourceKey('sepolia', parseSubscribeParams(['logs', { address: [A, B], topics: [T1, [T2, T1]] }]));
  const same = sourceKey(
    'sepolia',
    parseSubscribeParams(['logs', { address: [B, A, A], topics: [[T1], [T1, T2], null], fromBlock: 'latest' }]),
  );
  const other = sourceKey('sepolia', parseSubscribeParams(['logs', { address: [A], topics: [T1, [T2, T1]] }]));
  assert.equal(one, same);
  assert.notEqual(one, other);
  assert.notEqual(
    one,
    sourceKey('mainnet', parseSubscribeParams(['logs', { address: [A, B], topics: [T1, [T1, T2]] }])),
  );
  assert.equal(sourceKey('sepolia', { kind: 'newHeads' }), sourceKey('sepolia', parseSubscribeParams(['newHeads'])));
});

test('bad filters are refused naming what is wrong', () => {
  refused(['logs', { address: '0x12' }], /"address"/);
  refused(['logs', { topics: ['0x12'] }], /topics position/);
  refused(['logs', { topics: [null, null, null, null, null] }], /at most 4/);
  refused(['logs', { blockHash: T1 }], /"blockHash" is not accepted/);
  refused(['logs', { fromBlock: '0x1' }], /"fromBlock" is not accepted/);
  refused(['logs', { limit: 1 }], /unknown logs filter member "limit"/);
  refused(['logs', [A]], /must be an object/);
});
