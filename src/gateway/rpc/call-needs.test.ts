import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callNeeds, filterRange, followsWrites } from './call-needs.js';

const H = 0x100;
const HASH = `0x${'ab'.repeat(32)}`;

describe('callNeeds', () => {
  const table: Array<[string, unknown, unknown]> = [
    ['eth_blockNumber', [], { kind: 'head' }],
    ['eth_gasPrice', [], { kind: 'head' }],
    ['eth_getBalance', ['0x0000000000000000000000000000000000000001'], { kind: 'head' }],
    ['eth_getBalance', ['0x0000000000000000000000000000000000000001', 'latest'], { kind: 'head' }],
    ['eth_getBalance', ['0x0000000000000000000000000000000000000001', 'safe'], { kind: 'head' }],
    ['eth_getBalance', ['0x0000000000000000000000000000000000000001', '0x1a'], { kind: 'block', from: 26, to: 26 }],
    ['eth_getBalance', ['0x0000000000000000000000000000000000000001', 'earliest'], { kind: 'block', from: 0, to: 0 }],
    ['eth_getBalance', ['0x0000000000000000000000000000000000000001', HASH], { kind: 'hash' }],
    ['eth_call', [{}, { blockNumber: '0x10' }], { kind: 'block', from: 16, to: 16 }],
    ['eth_call', [{}, { blockHash: HASH }], { kind: 'hash' }],
    ['eth_getBlockByNumber', ['0x5', false], { kind: 'block', from: 5, to: 5 }],
    ['eth_getBlockByNumber', ['latest', false], { kind: 'head' }],
    ['eth_getBlockByHash', [HASH, false], { kind: 'hash' }],
    ['eth_getTransactionReceipt', [HASH], { kind: 'hash' }],
    ['eth_getTransactionByHash', [HASH], { kind: 'hash' }],
    ['eth_chainId', [], { kind: 'none' }],
    ['eth_sendRawTransaction', ['0x00'], { kind: 'none' }],
    ['web3_clientVersion', [], { kind: 'none' }],
    ['eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x9' }], { kind: 'block', from: 1, to: 9 }],
    ['eth_getLogs', [{ fromBlock: '0x1' }], { kind: 'block', from: 1, to: H }],
    ['eth_getLogs', [{}], { kind: 'block', from: H, to: H }],
    ['eth_getLogs', [{ blockHash: HASH }], { kind: 'hash' }],
    ['eth_newFilter', [{ fromBlock: 'earliest', toBlock: '0x2' }], { kind: 'block', from: 0, to: 2 }],
    ['some_unknownMethod', [], { kind: 'head' }],
  ];
  for (const [method, params, expected] of table) {
    it(`${method} ${JSON.stringify(params)} → ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(callNeeds(method, params, { networkHead: () => H }, 'n'), expected);
    });
  }

  it('an eth_getLogs range with a tag is head-relative while the network head is unknown', () => {
    assert.deepEqual(callNeeds('eth_getLogs', [{ fromBlock: '0x1' }], { networkHead: () => undefined }, 'n'), {
      kind: 'head',
    });
  });
});

describe('filterRange', () => {
  it('resolves tags and absent bounds to the network head, keeps numbers as given', () => {
    assert.deepEqual(filterRange({ fromBlock: '0x10', toBlock: 'latest' }, 100), { from: 16, to: 100 });
    assert.deepEqual(filterRange({}, 100), { from: 100, to: 100 });
    assert.deepEqual(filterRange({ fromBlock: '0x20', toBlock: '0x10' }, 100), { from: 32, to: 16 });
  });
  it('has no range for a blockHash filter or a tag without a known head', () => {
    assert.equal(filterRange({ blockHash: HASH }, 100), undefined);
    assert.equal(filterRange({ fromBlock: '0x1', toBlock: 'latest' }, undefined), undefined);
  });
});

describe('followsWrites', () => {
  it('receipts and transactions by hash always; nonce, call and estimate only at pending', () => {
    assert.equal(followsWrites('eth_getTransactionReceipt', [HASH]), true);
    assert.equal(followsWrites('eth_getTransactionByHash', [HASH]), true);
    assert.equal(followsWrites('eth_getTransactionCount', ['0x01', 'pending']), true);
    assert.equal(followsWrites('eth_getTransactionCount', ['0x01', 'latest']), false);
    assert.equal(followsWrites('eth_call', [{}, 'pending']), true);
    assert.equal(followsWrites('eth_estimateGas', [{}]), false);
    assert.equal(followsWrites('eth_getBalance', ['0x01', 'pending']), false);
  });
});
