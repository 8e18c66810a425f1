/**
 * Every header layout from real anvil nodes, one per fork (`--hardfork berlin`, `london`, `shanghai`,
 * `cancun`, `prague`, and anvil's default): a block holding a transaction of each type the fork has
 * (legacy, EIP-2930, EIP-1559, EIP-7702; blob transactions need KZG commitments anvil cannot be given
 * here, so EIP-4844 is covered by the recorded fixtures) and a contract creation that logs. The block
 * (full and hashes-only) and its receipts prove; any header field off by one byte, an altered
 * transaction and an altered receipt log fail.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { verifyBlock } from '../../src/verify/block.js';
import { verifyHeader } from '../../src/verify/header.js';
import { verifyBlockReceipts } from '../../src/verify/receipts.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { call } from '../helpers/devnet-chain.js';
import { assemble } from '../helpers/evm-program.js';
import { sender } from '../helpers/proof-chain.js';
import { alteredHeaders } from '../helpers/verify-lies.js';

type Json = Record<string, unknown>;

const CHAIN_ID = 31_337;
/** anvil's development key #1, which signs the EIP-7702 authorization. */
const AUTHORITY_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const TO = `0x${'11'.repeat(20)}` as Hex;
const TOPIC = `0x${'5a'.repeat(32)}`;
const LOGGING_INIT = assemble([
  'PUSH1',
  0x2a,
  'PUSH1',
  0,
  'MSTORE',
  'PUSH32',
  TOPIC,
  'PUSH1',
  32,
  'PUSH1',
  0,
  'LOG1',
  'STOP',
]);

interface Fork {
  readonly hardfork?: string;
  readonly layout: string;
  readonly types: readonly string[];
}

const FORKS: readonly Fork[] = [
  { hardfork: 'berlin', layout: 'legacy', types: ['0x0', '0x1'] },
  { hardfork: 'london', layout: 'london', types: ['0x0', '0x1', '0x2'] },
  { hardfork: 'shanghai', layout: 'shanghai', types: ['0x0', '0x1', '0x2'] },
  { hardfork: 'cancun', layout: 'cancun', types: ['0x0', '0x1', '0x2'] },
  { hardfork: 'prague', layout: 'prague', types: ['0x0', '0x1', '0x2', '0x4'] },
  { layout: 'prague', types: ['0x0', '0x1', '0x2', '0x4'] },
];

/** Sends one transaction of each type in `types` (plus a logging creation) and mines them in one block. */
async function mineMixedBlock(url: string, types: readonly string[]): Promise<void> {
  const from = sender(url, CHAIN_ID);
  const price = { gasPrice: 3_000_000_000n };
  const fees = { maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 1n };
  await from.send({ type: 'legacy', to: TO, value: 1n, ...price });
  await from.send({ type: 'legacy', data: LOGGING_INIT, ...price });
  if (types.includes('0x1')) {
    await from.send({
      type: 'eip2930',
      to: TO,
      value: 2n,
      accessList: [{ address: TO, storageKeys: [`0x${'00'.repeat(32)}`] }],
      ...price,
    });
  }
  if (types.includes('0x2')) await from.send({ type: 'eip1559', to: TO, value: 3n, ...fees });
  if (types.includes('0x4')) {
    const authorization = await privateKeyToAccount(AUTHORITY_KEY).signAuthorization({
      chainId: CHAIN_ID,
      address: TO,
      nonce: 0,
    });
    await from.send({ type: 'eip7702', to: TO, value: 4n, authorizationList: [authorization], ...fees });
  }
  await call(url, 'evm_mine');
}

for (const fork of FORKS) {
  describe(`anvil ${fork.hardfork ?? '(default fork)'}: ${fork.layout} header layout`, () => {
    let node: AnvilNode;
    let full: Json;
    let receipts: Json[];

    before(async () => {
      node = await startTestAnvil({
        chainId: CHAIN_ID,
        noMining: true,
        ...(fork.hardfork ? { hardfork: fork.hardfork } : {}),
      });
      await mineMixedBlock(node.url, fork.types);
      full = await call<Json>(node.url, 'eth_getBlockByNumber', ['latest', true]);
      receipts = await call<Json[]>(node.url, 'eth_getBlockReceipts', ['latest']);
    });
    after(() => node?.stop());

    test('the block with full transactions and its receipts prove against the block hash', async () => {
      const types = [...new Set((full.transactions as Json[]).map((tx) => tx.type as string))].sort();
      assert.deepEqual(types, fork.types);
      const block = await verifyBlock(full, { hash: full.hash as string, number: BigInt(full.number as string) });
      assert.ok(block.ok, JSON.stringify(!block.ok && block.failure));
      assert.equal(block.value.header.layout, fork.layout);
      assert.deepEqual(block.value.uncovered, ['totalDifficulty']);
      const proven = await verifyBlockReceipts(receipts, block.value.header, block.value.transactions);
      assert.ok(proven.ok, JSON.stringify(!proven.ok && proven.failure));
      assert.ok(proven.value.receipts.some((receipt) => receipt.answer.logs.length > 0));
      const hashesOnly = await call<Json>(node.url, 'eth_getBlockByNumber', ['latest', false]);
      assert.ok((await verifyBlock(hashesOnly, { hash: full.hash as string })).ok);
    });

    test('any header field off by one byte fails', async () => {
      for (const [field, altered] of alteredHeaders(full)) {
        const result = await verifyHeader(altered, { hash: full.hash as string });
        assert.equal(!result.ok && result.failure.check, 'header-hash', field);
      }
    });

    test('an altered transaction or receipt log fails', async () => {
      const txs = full.transactions as Json[];
      const alteredTx = { ...full, transactions: txs.map((tx, i) => (i === 0 ? { ...tx, value: '0x7' } : tx)) };
      const txResult = await verifyBlock(alteredTx, { hash: full.hash as string });
      assert.equal(!txResult.ok && txResult.failure.check, 'transaction');
      const header = await verifyHeader(full);
      assert.ok(header.ok);
      const logged = receipts.findIndex((receipt) => (receipt.logs as Json[]).length > 0);
      const alteredReceipts = receipts.map((receipt, i) =>
        i === logged
          ? { ...receipt, logs: (receipt.logs as Json[]).map((log) => ({ ...log, data: `0x${'00'.repeat(32)}` })) }
          : receipt,
      );
      const receiptResult = await verifyBlockReceipts(alteredReceipts, header.value);
      assert.equal(!receiptResult.ok && receiptResult.failure.check, 'receipts-root');
    });
  });
}
