import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KNOWN_TRANSACTION_ANSWERS, knownTransactionAnswer } from './known-transaction-answers.js';

const HASH = `0x${'ab'.repeat(32)}`;

describe('"already known" answers to a send', () => {
  it('every row matches its own message, in any case', () => {
    for (const row of KNOWN_TRANSACTION_ANSWERS) {
      assert.equal(knownTransactionAnswer({ message: `${row.message.toUpperCase()}!` })?.row, row, row.message);
    }
  });

  it("the nodes' own wording, and the hash a message names", () => {
    assert.equal(knownTransactionAnswer({ message: 'already known' })?.hash, undefined);
    assert.equal(knownTransactionAnswer({ message: 'transaction already imported' })?.row.origin, 'anvil');
    assert.equal(knownTransactionAnswer({ message: 'nonce too low: next nonce 5, tx nonce 4' })?.row.origin, 'geth');
    assert.equal(knownTransactionAnswer({ message: 'Known transaction' })?.row.origin, 'besu');
    assert.equal(knownTransactionAnswer({ message: `known transaction: ${HASH.slice(2)}` })?.hash, HASH);
    assert.equal(knownTransactionAnswer({ message: `Tx: [${HASH.toUpperCase()}] already Imported` })?.hash, HASH);
  });

  it('other send errors are not', () => {
    for (const message of [
      'insufficient funds for gas * price + value',
      'replacement transaction underpriced',
      'nonce too high',
    ]) {
      assert.equal(knownTransactionAnswer({ message }), undefined, message);
    }
    assert.equal(knownTransactionAnswer({ code: -32000 } as { message?: unknown }), undefined);
  });
});
