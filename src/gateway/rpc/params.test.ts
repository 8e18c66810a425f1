import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkParams } from './params.js';

const HASH = `0x${'ab'.repeat(32)}`;
/** A block hash that is not also a valid quantity (leading zero), so it only passes where hashes may. */
const ZERO_HASH = `0x00${'ab'.repeat(31)}`;
const ADDR = '0x000000000000000000000000000000000000dead';

describe('checkParams', () => {
  const ok: Array<[string, unknown]> = [
    ['eth_getBlockByNumber', ['0x0', false]],
    ['eth_getBlockByNumber', ['0x1a', true]],
    ['eth_getBlockByNumber', ['0x1A', true]],
    ['eth_getBlockByNumber', ['latest', false]],
    ['eth_getBlockByNumber', ['earliest', false]],
    ['eth_getBlockByNumber', ['pending', false]],
    ['eth_getBlockByNumber', ['safe', false]],
    ['eth_getBlockByNumber', ['finalized', false]],
    ['eth_getBalance', [ADDR, 'latest']],
    ['eth_getBalance', [ADDR, HASH]],
    ['eth_getBalance', [ADDR, ZERO_HASH]],
    ['eth_getBalance', [ADDR, { blockHash: HASH }]],
    ['eth_getBalance', [ADDR, { blockHash: HASH, requireCanonical: false }]],
    ['eth_getBalance', [ADDR, { blockNumber: '0x10' }]],
    ['eth_getBalance', [ADDR]],
    ['eth_call', [{ to: ADDR }]],
    ['eth_call', [{ to: ADDR }, 'pending']],
    ['eth_getStorageAt', [ADDR, '0x0', '0xff']],
    ['eth_feeHistory', ['0x4', 'latest', [25, 75]]],
    ['eth_getLogs', [{ fromBlock: '0x0', toBlock: 'finalized', address: ADDR }]],
    ['eth_getLogs', [{ blockHash: HASH }]],
    ['eth_newFilter', [{}]],
    ['eth_getBlockReceipts', [HASH]],
    ['eth_chainId', []],
    ['eth_chainId', undefined],
    ['eth_sendRawTransaction', ['0x02']],
    ['some_unchecked', { any: 'thing' }],
  ];
  for (const [method, params] of ok) {
    it(`accepts ${method} ${JSON.stringify(params)}`, () => {
      assert.equal(checkParams(method, params), undefined);
    });
  }

  const bad: Array<[string, unknown, RegExp]> = [
    ['eth_getBlockByNumber', ['0x', false], /not a block number or tag/],
    ['eth_getBlockByNumber', ['0x01', false], /no leading zeros/],
    ['eth_getBlockByNumber', ['0x00', false], /no leading zeros/],
    ['eth_getBlockByNumber', ['1a', false], /needs the 0x prefix/],
    ['eth_getBlockByNumber', ['0X1a', false], /not a block number/],
    ['eth_getBlockByNumber', [26, false], /hex string/],
    ['eth_getBlockByNumber', ['Latest', false], /not a block number or tag/],
    ['eth_getBlockByNumber', [ZERO_HASH, false], /not a block number or tag/],
    ['eth_getBlockByNumber', ['0x0'], /expected 2 params, got 1/],
    ['eth_getBlockByNumber', ['0x0', false, 1], /expected 2 params, got 3/],
    ['eth_getBlockByNumber', ['0x0', 'true'], /true or false/],
    ['eth_getBlockByNumber', undefined, /must be an array/],
    ['eth_getBlockByNumber', { block: '0x0', full: false }, /must be an array/],
    ['eth_getBalance', [ADDR, '0x01'], /param 2/],
    ['eth_getBalance', [ADDR, null], /param 2/],
    ['eth_getBalance', [ADDR, { blockHash: '0x1' }], /EIP-1898/],
    ['eth_getBalance', [ADDR, { blockNumber: '0x01' }], /EIP-1898/],
    ['eth_getBalance', [ADDR, { blockHash: HASH, extra: 1 }], /EIP-1898/],
    ['eth_estimateGas', [{}, ZERO_HASH], /param 2/],
    ['eth_feeHistory', ['0x4'], /param 2 \(block\) is missing/],
    ['eth_getTransactionByBlockNumberAndIndex', ['0x01', '0x0'], /param 1/],
    ['eth_getUncleCountByBlockNumber', ['0x01'], /param 1/],
    ['eth_getLogs', [{ fromBlock: '0x01' }], /fromBlock/],
    ['eth_getLogs', [{ toBlock: 'tomorrow' }], /toBlock/],
    ['eth_getLogs', [{ blockHash: '0x12' }], /blockHash/],
    ['eth_getLogs', [{ blockHash: HASH, fromBlock: '0x1' }], /not both/],
    ['eth_getLogs', ['latest'], /must be an object/],
    ['eth_getLogs', [], /must be an object/],
  ];
  for (const [method, params, message] of bad) {
    it(`refuses ${method} ${JSON.stringify(params)}`, () => {
      const error = checkParams(method, params);
      assert.ok(error, 'refused');
      assert.equal(error.code, 'RPC_INVALID_PARAMS');
      assert.equal(error.spec.rpc, -32602);
      assert.match(error.message, message);
      assert.match(error.message, new RegExp(`^Invalid params for ${method}: `));
    });
  }
});
