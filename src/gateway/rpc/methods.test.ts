import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type BlockParamKind, type MethodSpec, STANDARD_METHODS } from './methods.js';
import { checkParams } from './params.js';

/**
 * Every block parameter of ethereum/execution-apis `src/eth/*.yaml` (commit 033ca6e69da0): method →
 * [position, schema, required]. `tag` is the spec's BlockNumberOrTag, `tagOrHash` its
 * BlockNumberOrTagOrHash. Written out by hand from the spec, so a change to methods.ts that drifts from
 * it fails here; plus the uncle methods of the original JSON-RPC spec, which take a block number.
 */
const SPEC_BLOCK_PARAMS: Record<string, [number, BlockParamKind, boolean]> = {
  eth_getBlockByNumber: [0, 'tag', true],
  eth_getBlockTransactionCountByNumber: [0, 'tag', false],
  eth_getBlockReceipts: [0, 'tagOrHash', true],
  eth_getBlockAccessList: [0, 'tagOrHash', true],
  eth_call: [1, 'tagOrHash', false],
  eth_estimateGas: [1, 'tag', false],
  eth_createAccessList: [1, 'tag', false],
  eth_simulateV1: [1, 'tagOrHash', false],
  eth_feeHistory: [1, 'tag', true],
  eth_getBalance: [1, 'tagOrHash', false],
  eth_getStorageAt: [2, 'tagOrHash', false],
  eth_getStorageValues: [1, 'tagOrHash', false],
  eth_getTransactionCount: [1, 'tagOrHash', false],
  eth_getCode: [1, 'tagOrHash', false],
  eth_getProof: [2, 'tagOrHash', false],
  eth_getTransactionByBlockNumberAndIndex: [0, 'tag', true],
  eth_getUncleByBlockNumberAndIndex: [0, 'tag', true],
  eth_getUncleCountByBlockNumber: [0, 'tag', true],
};
/** Methods whose first param is a Filter with fromBlock/toBlock/blockHash. */
const SPEC_FILTER_METHODS = ['eth_getLogs', 'eth_newFilter'];

const HASH = `0x00${'ab'.repeat(31)}`;

/** Params for `method` with `block` at its block position and harmless values elsewhere. */
function paramsWith(method: string, index: number, block: unknown): unknown[] {
  if (method === 'eth_getBlockByNumber') return [block, false];
  const params: unknown[] = Array.from({ length: index }, () => '0x1');
  params[index] = block;
  return params;
}

describe('block parameters follow ethereum/execution-apis', () => {
  it('methods.ts lists exactly the spec block parameters', () => {
    const listed = Object.entries(STANDARD_METHODS)
      .filter(([, spec]) => spec.blockParams !== undefined)
      .map(([method, spec]) => [method, spec.blockParams?.map((p) => [p.index, p.kind, p.required])]);
    const expected = Object.entries(SPEC_BLOCK_PARAMS).map(([method, param]) => [method, [param]]);
    assert.deepEqual(Object.fromEntries(listed), Object.fromEntries(expected));
    const filters = Object.entries(STANDARD_METHODS)
      .filter(([, spec]) => spec.filterParam === true)
      .map(([method]) => method);
    assert.deepEqual(filters.sort(), [...SPEC_FILTER_METHODS].sort());
  });

  for (const [method, [index, kind, required]] of Object.entries(SPEC_BLOCK_PARAMS)) {
    it(`${method}: param ${index + 1} is checked before any upstream call`, () => {
      for (const good of ['0x0', '0x1a', 'latest', 'earliest', 'pending', 'safe', 'finalized']) {
        assert.equal(checkParams(method, paramsWith(method, index, good)), undefined, good);
      }
      for (const bad of ['0x01', '0x', '1a', 'newest', 26, null]) {
        const error = checkParams(method, paramsWith(method, index, bad));
        assert.equal(error?.code, 'RPC_INVALID_PARAMS', `${JSON.stringify(bad)} is refused`);
        assert.equal(error?.spec.rpc, -32602);
        assert.match(error?.message ?? '', new RegExp(`param ${index + 1} \\(block\\)`));
      }
      const withHash = checkParams(method, paramsWith(method, index, HASH));
      if (kind === 'tagOrHash') assert.equal(withHash, undefined, 'a block hash is accepted');
      else assert.equal(withHash?.code, 'RPC_INVALID_PARAMS', 'a block hash is refused');
      const missing = checkParams(
        method,
        method === 'eth_getBlockByNumber' ? [] : paramsWith(method, index, 0).slice(0, index),
      );
      if (required) assert.equal(missing?.code, 'RPC_INVALID_PARAMS', 'a missing block is refused');
      else assert.equal(missing, undefined, 'an optional block may be left out');
    });
  }

  for (const method of SPEC_FILTER_METHODS) {
    it(`${method}: fromBlock/toBlock/blockHash are checked`, () => {
      assert.equal(checkParams(method, [{ fromBlock: '0x0', toBlock: 'latest' }]), undefined);
      assert.equal(checkParams(method, [{ blockHash: `0x${'ab'.repeat(32)}` }]), undefined);
      for (const filter of [{ fromBlock: '0x01' }, { toBlock: 'newest' }, { blockHash: '0x1' }]) {
        assert.equal(checkParams(method, [filter])?.code, 'RPC_INVALID_PARAMS', JSON.stringify(filter));
      }
    });
  }
});

/** The methods whose entry sets `field`, with its value: the lists each reader of the table once kept. */
function withField<K extends keyof MethodSpec>(field: K): Record<string, MethodSpec[K]> {
  return Object.fromEntries(
    Object.entries(STANDARD_METHODS)
      .filter(([, spec]) => spec[field] !== undefined)
      .map(([method, spec]) => [method, spec[field]]),
  );
}

describe('the method table', () => {
  it('writes: retried only when they surely never reached the origin', () => {
    assert.deepEqual(withField('write'), { eth_sendTransaction: true, eth_sendRawTransaction: true });
  });

  it('filter calls: the three that create, the two that use, the one that uninstalls', () => {
    assert.deepEqual(withField('filter'), {
      eth_newFilter: 'create',
      eth_newBlockFilter: 'create',
      eth_newPendingTransactionFilter: 'create',
      eth_getFilterChanges: 'use',
      eth_getFilterLogs: 'use',
      eth_uninstallFilter: 'uninstall',
    });
  });

  it('cacheable reads and their kind; nothing else is cached', () => {
    assert.deepEqual(withField('cache'), {
      eth_chainId: 'static',
      net_version: 'static',
      eth_getBlockByHash: 'block-hash',
      eth_getTransactionByHash: 'tx-hash',
      eth_getTransactionReceipt: 'tx-hash',
      eth_getBlockByNumber: 'block-number',
    });
  });

  it('no write is cacheable or a filter call', () => {
    for (const [method, spec] of Object.entries(STANDARD_METHODS)) {
      if (spec.write) assert.equal(spec.cache ?? spec.filter, undefined, method);
    }
  });
});
