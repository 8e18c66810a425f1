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

/** The canonical chain as the tracker's window holds it: block 100 is BLOCK_HASH, nothing else is known. */
const canonical = (network: string, height: number) => (network === 'net' && height === 100 ? BLOCK_HASH : undefined);

test('blocks by number are admitted only for the height asked, at or below finality, and canonical', () => {
  const plan = planRead('net', 'eth_getBlockByNumber', ['0x64', false], FINALIZED)!;
  const block = { number: '0x64', hash: BLOCK_HASH };
  assert.deepEqual(admit(plan, 200, answer({ result: block }), FINALIZED, canonical), {
    height: 100n,
    blockHash: BLOCK_HASH,
  });
  assert.equal(admit(plan, 200, answer({ result: { ...block, number: '0x63' } }), FINALIZED, canonical), undefined);
  assert.equal(admit(plan, 200, answer({ result: block }), 99n, canonical), undefined); // finality went back meanwhile
  const altered = { ...block, hash: HASH, miner: '0x0000000000000000000000000000000000000001' };
  assert.equal(admit(plan, 200, answer({ result: altered }), FINALIZED, canonical), undefined, 'not the chain’s block');
  assert.equal(admit(plan, 200, answer({ result: block }), FINALIZED), undefined, 'nothing to check it against');
  const old = planRead('net', 'eth_getBlockByNumber', ['0x10', false], FINALIZED)!;
  const below = admit(old, 200, answer({ result: { number: '0x10', hash: BLOCK_HASH } }), FINALIZED, canonical);
  assert.equal(below, undefined, 'below the window: answered, not kept');
});

test('by hash, only the object asked for is admitted', () => {
  const plan = planRead('net', 'eth_getBlockByHash', [HASH.toUpperCase().replace('0X', '0x'), false], FINALIZED)!;
  assert.deepEqual(admit(plan, 200, answer({ result: { number: '0x5', hash: HASH } }), FINALIZED), {
    height: 5n,
    blockHash: HASH,
  });
  assert.equal(admit(plan, 200, answer({ result: { number: '0x5', hash: BLOCK_HASH } }), FINALIZED), undefined);
  const tx = planRead('net', 'eth_getTransactionByHash', [HASH], FINALIZED)!;
  const mined = { blockNumber: '0x64', blockHash: BLOCK_HASH };
  assert.notEqual(admit(tx, 200, answer({ result: { ...mined, hash: HASH } }), FINALIZED), undefined);
  assert.equal(admit(tx, 200, answer({ result: { ...mined, hash: BLOCK_HASH } }), FINALIZED), undefined);
});

test('transactions and receipts are admitted only once their block is final; receipts only on the canonical chain', () => {
  for (const [method, key] of [
    ['eth_getTransactionByHash', 'hash'],
    ['eth_getTransactionReceipt', 'transactionHash'],
  ] as const) {
    const plan = planRead('net', method, [HASH], FINALIZED)!;
    const mined = { [key]: HASH, blockNumber: '0x64', blockHash: BLOCK_HASH };
    assert.deepEqual(admit(plan, 200, answer({ result: mined }), FINALIZED, canonical), {
      height: 100n,
      blockHash: BLOCK_HASH,
    });
    assert.equal(
      admit(plan, 200, answer({ result: { ...mined, blockNumber: '0x65' } }), FINALIZED, canonical),
      undefined,
    );
    assert.equal(
      admit(plan, 200, answer({ result: { ...mined, blockNumber: null, blockHash: null } }), FINALIZED, canonical),
      undefined,
    );
    assert.equal(admit(plan, 200, answer({ result: mined }), undefined, canonical), undefined);
    assert.equal(admit(plan, 200, answer({ result: null }), FINALIZED, canonical), undefined);
  }
  const receipt = planRead('net', 'eth_getTransactionReceipt', [HASH], FINALIZED)!;
  const sideBlock = { transactionHash: HASH, blockNumber: '0x64', blockHash: HASH };
  assert.equal(admit(receipt, 200, answer({ result: sideBlock }), FINALIZED, canonical), undefined, 'not canonical');
  const tx = planRead('net', 'eth_getTransactionByHash', [HASH], FINALIZED)!;
  assert.notEqual(
    admit(tx, 200, answer({ result: { hash: HASH, blockNumber: '0x64', blockHash: HASH } }), FINALIZED),
    undefined,
    'a transaction needs only its own hash (its block fields are integrity: SPEC §18)',
  );
});
