/**
 * Receipts roots from recorded go-ethereum answers: a block before Byzantium (receipts carry a state root)
 * and an Osaka-era block with logs; every way of altering a receipt or one of its logs is refused.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fixtures from '../../test/fixtures/verify/execution-apis.json' with { type: 'json' };
import { settle } from './failure.js';
import { proveHeader } from './header.js';
import { proveBlockReceipts, proveReceipt, verifyBlockReceipts, verifyReceipt } from './receipts.js';
import { proveBlockTransactions } from './transactions.js';

type Json = Record<string, unknown>;
const cases = {
  legacy: {
    block: fixtures.blocks.legacy.result as unknown as Json,
    receipts: fixtures.blockReceipts.legacy.result as Json[],
  },
  osaka: {
    block: fixtures.blocks.osaka.result as unknown as Json,
    receipts: fixtures.blockReceipts.osaka.result as Json[],
  },
};

async function proven(name: keyof typeof cases) {
  const { block, receipts } = cases[name];
  const header = proveHeader(block);
  const { transactions } = await proveBlockTransactions(block.transactions as unknown[], header);
  return { header, transactions, receipts };
}

function changed(receipts: Json[], index: number, change: (receipt: Json) => Json): Json[] {
  return receipts.map((receipt, i) => (i === index ? change(structuredClone(receipt)) : receipt));
}

function withLog(receipt: Json, change: (log: Json) => void): Json {
  change((receipt.logs as Json[])[1] as Json);
  return receipt;
}

describe('receipts root', () => {
  for (const name of ['legacy', 'osaka'] as const) {
    test(`the recorded ${name} receipts prove against the header, all fields covered with the transactions`, async () => {
      const { header, transactions, receipts } = await proven(name);
      const withTxs = await verifyBlockReceipts(receipts, header, transactions);
      assert.ok(withTxs.ok, JSON.stringify(!withTxs.ok && withTxs.failure));
      assert.deepEqual(withTxs.value.uncovered, []);
      const alone = await verifyBlockReceipts(receipts, header);
      assert.ok(alone.ok);
      assert.ok(alone.value.uncovered.includes('from') && alone.value.uncovered.includes('transactionHash'));
    });
  }

  test('a consensus field of a receipt or of one of its logs altered breaks the root', async () => {
    const { header, receipts } = await proven('osaka');
    const changes: [string, (receipt: Json) => Json][] = [
      ['status', (r) => ({ ...r, status: '0x0' })],
      [
        'cumulativeGasUsed',
        (r) => ({
          ...r,
          cumulativeGasUsed: `0x${(BigInt(r.cumulativeGasUsed as string) + 1n).toString(16)}`,
          gasUsed: `0x${(BigInt(r.gasUsed as string) + 1n).toString(16)}`,
        }),
      ],
      ['log data', (r) => withLog(r, (log) => (log.data = `0x${'00'.repeat(31)}09`))],
      ['log topic', (r) => withLog(r, (log) => ((log.topics as string[])[0] = `0x${'77'.repeat(32)}`))],
      ['log address', (r) => withLog(r, (log) => (log.address = `0x${'99'.repeat(20)}`))],
      ['log dropped', (r) => ({ ...r, logs: (r.logs as Json[]).slice(0, 1) })],
      ['type', (r) => ({ ...r, type: '0x2' })],
    ];
    for (const [what, change] of changes) {
      const result = await verifyBlockReceipts(changed(receipts, 1, change), header);
      assert.equal(!result.ok && result.failure.check, 'receipts-root', what);
    }
    const missing = await verifyBlockReceipts(receipts.slice(0, -1), header);
    assert.equal(!missing.ok && missing.failure.check, 'receipts-root');
  });

  test('a receipt field the root does not cover is derived and compared', async () => {
    const { header, transactions, receipts } = await proven('osaka');
    const changes: [string, (receipt: Json) => Json][] = [
      ['gasUsed', (r) => ({ ...r, gasUsed: '0x5208' })],
      ['transactionIndex', (r) => ({ ...r, transactionIndex: '0x3' })],
      ['blockHash', (r) => ({ ...r, blockHash: fixtures.blocks.prague.result.hash })],
      ['logIndex', (r) => withLog(r, (log) => (log.logIndex = '0x7'))],
      ['log blockNumber', (r) => withLog(r, (log) => (log.blockNumber = '0x1'))],
      ['log transactionHash', (r) => withLog(r, (log) => (log.transactionHash = `0x${'00'.repeat(32)}`))],
      ['from', (r) => ({ ...r, from: `0x${'12'.repeat(20)}` })],
      ['contractAddress', (r) => ({ ...r, contractAddress: `0x${'34'.repeat(20)}` })],
      ['effectiveGasPrice', (r) => ({ ...r, effectiveGasPrice: '0x1' })],
      ['transactionHash', (r) => ({ ...r, transactionHash: `0x${'56'.repeat(32)}` })],
    ];
    for (const [what, change] of changes) {
      const result = await verifyBlockReceipts(changed(receipts, 1, change), header, transactions);
      assert.equal(!result.ok && result.failure.check, 'receipt', what);
    }
  });

  test('a single receipt is proven by its place among its block’s proven receipts', async () => {
    const { header, transactions, receipts } = await proven('legacy');
    const block = await proveBlockReceipts(receipts, header, transactions);
    const one = await verifyReceipt(receipts[2], block, header);
    assert.ok(one.ok);
    assert.equal(one.value.gasUsed, BigInt((receipts[2] as Json).gasUsed as string));
    const lies: Json[] = [
      { ...(receipts[2] as Json), contractAddress: (receipts[1] as Json).contractAddress },
      { ...(receipts[2] as Json), gasUsed: '0x1' },
      { ...(receipts[2] as Json), root: (receipts[1] as Json).root },
      { ...(receipts[2] as Json), transactionIndex: '0x9' },
    ];
    for (const lie of lies) {
      const result = await settle(() => proveReceipt(lie, block, header));
      assert.equal(result.ok, false, JSON.stringify(lie));
    }
  });
});
