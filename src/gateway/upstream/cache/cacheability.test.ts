import assert from 'node:assert/strict';
import { test } from 'node:test';
import { admit, planRead } from './cacheability.js';

const HASH = `0x${'ab'.repeat(32)}`;
const BLOCK_HASH = `0x${'cd'.repeat(32)}`;
const FINALIZED = 100n;

test('which reads get a cache plan', () => {
  const cases: Array<[string, unknown, string | undefined]> = [
    ['eth_chainId', [], 'static'],
    ['eth_chainId', undefined, 'static'],
    ['net_version', [], 'static'],
    ['eth_getBlockByHash', [HASH, false], 'block-hash'],
    ['eth_getTransactionByHash', [HASH], 'tx-hash'],
    ['eth_getTransactionReceipt', [HASH], 'tx-hash'],
    ['eth_getBlockByNumber', ['0x64', true], 'block-number'], // = finalized
    ['eth_getBlockByNumber', ['0x0', false], 'block-number'],
    // never:
    ['eth_getBlockByNumber', ['0x65', false], undefined], // above finalized
    ['eth_getBlockByNumber', ['latest', false], undefined],
    ['eth_getBlockByNumber', ['pending', false], undefined],
    ['eth_getBlockByNumber', ['finalized', false], undefined],
    ['eth_getBlockByNumber', ['safe', false], undefined],
    ['eth_getBlockByNumber', ['earliest', false], undefined],
    ['eth_getBlockByNumber', ['0x01', false], undefined], // not a canonical quantity
    ['eth_getBlockByNumber', ['0x1'], undefined], // missing flag
    ['eth_getBlockByHash', ['0x1234', false], undefined], // not a hash
    ['eth_blockNumber', [], undefined],
    ['eth_getBalance', ['0x0000000000000000000000000000000000000000', 'latest'], undefined],
    ['eth_call', [{ to: '0x0000000000000000000000000000000000000000' }, 'latest'], undefined],
    ['eth_sendRawTransaction', ['0x00'], undefined],
    ['eth_chainId', ['extra'], undefined],
    ['eth_getTransactionByHash', { hash: HASH }, undefined], // object params
  ];
  for (const [method, params, kind] of cases) {
    assert.equal(planRead('net', method, params, FINALIZED)?.kind, kind, `${method} ${JSON.stringify(params)}`);
  }
});

test('blocks by number are not cacheable while finality is unknown', () => {
  assert.equal(planRead('net', 'eth_getBlockByNumber', ['0x1', false], undefined), undefined);
});

test('keys are canonical: case of hashes and hex digits does not matter; networks and flags do', () => {
  const key = (network: string, method: string, params: unknown) => planRead(network, method, params, FINALIZED)?.key;
  assert.equal(
    key('a', 'eth_getBlockByHash', [HASH, false]),
    key('a', 'eth_getBlockByHash', [HASH.toUpperCase().replace('0X', '0x'), false]),
  );
  assert.equal(key('a', 'eth_getBlockByNumber', ['0x1a', false]), key('a', 'eth_getBlockByNumber', ['0x1A', false]));
  assert.notEqual(key('a', 'eth_getBlockByNumber', ['0x1a', false]), key('a', 'eth_getBlockByNumber', ['0x1a', true]));
  assert.notEqual(key('a', 'eth_chainId', []), key('b', 'eth_chainId', []));
  assert.notEqual(key('a', 'eth_getTransactionByHash', [HASH]), key('a', 'eth_getTransactionReceipt', [HASH]));
});

const answer = (json: unknown) => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 7, ...(json as object) }));

test('only successful, non-null answers are admitted', () => {
  const chainId = planRead('net', 'eth_chainId', [], FINALIZED)!;
  assert.deepEqual(admit(chainId, 200, answer({ result: '0x1' }), FINALIZED), {});
  assert.equal(admit(chainId, 200, answer({ error: { code: -32000, message: 'x' } }), FINALIZED), undefined);
  assert.equal(admit(chainId, 500, answer({ result: '0x1' }), FINALIZED), undefined);
  assert.equal(admit(chainId, 200, Buffer.from('{"jsonrpc":"2.0","id":1,"result":'), FINALIZED), undefined);
  assert.equal(admit(chainId, 200, answer({ result: null }), FINALIZED), undefined);

  const byHash = planRead('net', 'eth_getBlockByHash', [HASH, false], FINALIZED)!;
  assert.equal(admit(byHash, 200, answer({ result: null }), FINALIZED), undefined); // unknown (yet)
  assert.deepEqual(admit(byHash, 200, answer({ result: { number: '0x200', hash: HASH } }), FINALIZED), {
    height: 0x200n,
    blockHash: HASH,
  });
});

test('blocks by number are admitted only for the height asked and at or below finality', () => {
  const plan = planRead('net', 'eth_getBlockByNumber', ['0x64', false], FINALIZED)!;
  const block = { number: '0x64', hash: BLOCK_HASH };
  assert.deepEqual(admit(plan, 200, answer({ result: block }), FINALIZED), { height: 100n, blockHash: BLOCK_HASH });
  assert.equal(admit(plan, 200, answer({ result: { ...block, number: '0x63' } }), FINALIZED), undefined);
  assert.equal(admit(plan, 200, answer({ result: block }), 99n), undefined); // finality went back meanwhile
});

test('transactions and receipts are admitted only once their block is final', () => {
  for (const method of ['eth_getTransactionByHash', 'eth_getTransactionReceipt']) {
    const plan = planRead('net', method, [HASH], FINALIZED)!;
    const mined = { hash: HASH, blockNumber: '0x64', blockHash: BLOCK_HASH };
    assert.deepEqual(admit(plan, 200, answer({ result: mined }), FINALIZED), { height: 100n, blockHash: BLOCK_HASH });
    assert.equal(admit(plan, 200, answer({ result: { ...mined, blockNumber: '0x65' } }), FINALIZED), undefined);
    assert.equal(
      admit(plan, 200, answer({ result: { ...mined, blockNumber: null, blockHash: null } }), FINALIZED),
      undefined,
    );
    assert.equal(admit(plan, 200, answer({ result: mined }), undefined), undefined);
    assert.equal(admit(plan, 200, answer({ result: null }), FINALIZED), undefined);
  }
});
