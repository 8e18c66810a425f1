/**
 * Whole block answers from the recorded execution-apis chain: full transactions proven against the
 * transactions root (legacy before EIP-155, EIP-155 with a large chain id), the recorded transactions of
 * every type proven by their hashes, and each way of altering a block answer refused.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Hex, keccak256, toHex, toRlp } from 'viem';
import fixtures from '../../test/fixtures/verify/execution-apis.json' with { type: 'json' };
import { HEADER_FIELDS } from '../../test/helpers/verify-lies.js';
import { proveUncles, verifyBlock } from './block.js';
import { settle, type Verified } from './failure.js';
import { proveHeader } from './header.js';
import { verifyTransaction } from './transactions.js';

type Json = Record<string, unknown>;
const legacy = fixtures.blocks.legacy.result as unknown as Json;
const osaka = fixtures.blocks.osaka.result as unknown as Json;

function failureOf<T>(result: Verified<T>) {
  assert.equal(result.ok, false, 'the check should have failed');
  return result.ok ? undefined : result.failure;
}

function withTransaction(block: Json, index: number, change: (tx: Json) => Json): Json {
  const transactions = (block.transactions as Json[]).map((tx, i) => (i === index ? change({ ...tx }) : tx));
  return { ...block, transactions };
}

describe('block answers', () => {
  test('full blocks prove their transactions, size and empty uncles; nothing is left uncovered', async () => {
    for (const block of [legacy, osaka, fixtures.blocks.genesis.result as unknown as Json]) {
      const result = await verifyBlock(block, { hash: block.hash as string });
      assert.ok(result.ok, JSON.stringify(!result.ok && result.failure));
      assert.equal(result.value.transactions?.length, (block.transactions as unknown[]).length);
      assert.deepEqual(result.value.uncovered, []);
    }
  });

  test('a block with transaction hashes only names the list (and size) as uncovered', async () => {
    const result = await verifyBlock(fixtures.blocks.prague.result);
    assert.ok(result.ok);
    assert.deepEqual(result.value.uncovered, ['size', 'transactions']);
  });

  test('the transaction of every type recorded proves its hash and signer', async () => {
    for (const [name, recorded] of Object.entries(fixtures.transactions)) {
      const result = await verifyTransaction(recorded.result);
      assert.ok(result.ok, `${name}: ${JSON.stringify(!result.ok && result.failure)}`);
      assert.equal(result.value.hash, recorded.result.hash);
      assert.equal(result.value.type, Number(recorded.result.type));
      const altered = { ...recorded.result, nonce: `0x${(BigInt(recorded.result.nonce) + 1n).toString(16)}` };
      assert.equal(failureOf(await verifyTransaction(altered))?.check, 'transaction', name);
      const otherSigner = { ...recorded.result, from: `0x${'12'.repeat(20)}` };
      assert.equal(failureOf(await verifyTransaction(otherSigner))?.field, 'from', name);
    }
  });

  test('a transaction left out, added twice or reordered breaks the transactions root', async () => {
    const txs = osaka.transactions as Json[];
    const renumbered = (list: Json[]) => list.map((tx, i) => ({ ...tx, transactionIndex: `0x${i.toString(16)}` }));
    for (const list of [txs.slice(1), [...txs, txs[0] as Json], [txs[1], txs[0], ...txs.slice(2)] as Json[]]) {
      const failure = failureOf(await verifyBlock({ ...osaka, transactions: renumbered(list) }));
      assert.equal(failure?.check, 'transactions-root');
    }
  });

  test('a transaction field changed without its signature fails, covered or derived', async () => {
    const changes: [string, (tx: Json) => Json][] = [
      ['value', (tx) => ({ ...tx, value: '0x3' })],
      ['input', (tx) => ({ ...tx, input: '0x00' })],
      ['hash', (tx) => ({ ...tx, hash: `0x${'ab'.repeat(32)}` })],
      ['from', (tx) => ({ ...tx, from: `0x${'cd'.repeat(20)}` })],
      ['blockHash', (tx) => ({ ...tx, blockHash: fixtures.blocks.prague.result.hash })],
      ['transactionIndex', (tx) => ({ ...tx, transactionIndex: '0x9' })],
      ['chainId', (tx) => ({ ...tx, chainId: '0x1' })],
      ['gasPrice', (tx) => ({ ...tx, gasPrice: '0x1' })],
    ];
    for (const [field, change] of changes) {
      const failure = failureOf(await verifyBlock(withTransaction(osaka, 3, change)));
      assert.equal(failure?.check, 'transaction', `${field}: ${failure?.reason}`);
    }
  });

  test('a wrong size, an invented withdrawal or an invented uncle fails', async () => {
    assert.equal(failureOf(await verifyBlock({ ...osaka, size: '0x456' }))?.check, 'block-field');
    const withdrawal = { index: '0x0', validatorIndex: '0x1', address: `0x${'22'.repeat(20)}`, amount: '0x64' };
    assert.equal(failureOf(await verifyBlock({ ...osaka, withdrawals: [withdrawal] }))?.check, 'withdrawals-root');
    const uncled = await verifyBlock({ ...osaka, uncles: [fixtures.blocks.prague.result.hash] });
    assert.equal(failureOf(uncled)?.check, 'uncles-hash');
    const notEmpty = { ...legacy, transactions: [] };
    assert.equal(failureOf(await verifyBlock(notEmpty))?.check, 'transactions-root');
  });
});

describe('uncles', () => {
  /** The legacy header fields (the first 15) in RLP order, encoded with viem: independent of header.ts. */
  function viemUnclesHash(uncles: readonly Json[]): string {
    const quantity = (value: string) => (BigInt(value) === 0n ? '0x' : toHex(BigInt(value)));
    const fields = (header: Json) =>
      HEADER_FIELDS.slice(0, 15).map((field, i) =>
        i >= 7 && i <= 11 ? quantity(header[field] as string) : (header[field] as Hex),
      );
    return keccak256(toRlp(uncles.map(fields) as Hex[][]));
  }

  test('uncle headers prove the uncles hash; another uncle or a wrong uncle hash fails', async () => {
    const uncles = [fixtures.blocks.genesis.result as unknown as Json, legacy];
    const header = { ...proveHeader(legacy), sha3Uncles: viemUnclesHash(uncles) as Hex };
    proveUncles(
      uncles,
      header,
      uncles.map((uncle) => uncle.hash as string),
    );
    const swapped = await settle(() => proveUncles([uncles[1], uncles[0]] as Json[], header));
    assert.equal(!swapped.ok && swapped.failure.check, 'uncles-hash');
    const misnamed = await settle(() => proveUncles(uncles, header, [legacy.hash as string, legacy.hash as string]));
    assert.equal(!misnamed.ok && misnamed.failure.check, 'uncles-hash');
  });
});
