/**
 * Read-your-writes (SPEC §9): two INDEPENDENT anvil nodes (not mirrored: a transaction exists only on the
 * node that took it) behind one pool with random steering. After a client's eth_sendRawTransaction
 * through the gateway, its receipt, the transaction by hash and its pending nonce are read through the
 * gateway — each must come from the origin that accepted the transaction. Without the rule, each read
 * would find the other node half of the time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseEther } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import type { AnvilNode } from '../helpers/anvil.js';
import { type AnvilPair, startAnvilPair, type TestApp } from '../helpers/app.js';
import { rpc } from '../helpers/http.js';

const MNEMONIC = 'test test test test test test test test test test test junk';
const RECIPIENT = '0x000000000000000000000000000000000000bEEF';

let pair: AnvilPair;
let nodes: AnvilNode[];
let app: TestApp;

before(async () => {
  pair = await startAnvilPair();
  ({ nodes, app } = pair);
});

after(() => pair?.close());

describe('read-your-writes', () => {
  it("sends each client's receipt, transaction and pending nonce reads to the origin that took its transaction", async () => {
    const tookIt = new Set<string>();
    for (let i = 0; i < 10; i += 1) {
      const account = mnemonicToAccount(MNEMONIC, { addressIndex: i });
      const raw = await account.signTransaction({
        chainId: 11155111,
        type: 'eip1559',
        to: RECIPIENT,
        value: parseEther('0.01'),
        nonce: 0,
        gas: 21_000n,
        maxFeePerGas: 20_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      });
      const sent = await rpc(app.rpcUrl(), 'eth_sendRawTransaction', [raw]);
      const hash = sent.answer.result as string;
      assert.match(hash, /^0x[0-9a-f]{64}$/, JSON.stringify(sent.answer));

      // Which node has it (the nodes are independent chains)? Anvil answers the send before it has mined
      // the block: wait (bounded) until one node shows the receipt.
      const deadline = Date.now() + 5000;
      let direct: Array<Awaited<ReturnType<typeof rpc>>>;
      for (;;) {
        direct = await Promise.all(nodes.map((node) => rpc(node.url, 'eth_getTransactionReceipt', [hash])));
        if (direct.some((answer) => answer.answer.result !== null)) break;
        assert.ok(Date.now() < deadline, 'no node mined the transaction within 5 s');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(direct.filter((answer) => answer.answer.result !== null).length, 1, 'exactly one node took it');
      tookIt.add(nodes[direct.findIndex((answer) => answer.answer.result !== null)]?.url as string);

      const receipt = await rpc(app.rpcUrl(), 'eth_getTransactionReceipt', [hash]);
      assert.equal((receipt.answer.result as { transactionHash?: string } | null)?.transactionHash, hash);
      const tx = await rpc(app.rpcUrl(), 'eth_getTransactionByHash', [hash]);
      assert.equal((tx.answer.result as { hash?: string } | null)?.hash, hash);
      const nonce = await rpc(app.rpcUrl(), 'eth_getTransactionCount', [account.address, 'pending']);
      assert.equal(nonce.answer.result, '0x1');
    }
    // Random steering spread the writes: the rule was exercised on both nodes (p of one node only: 2^-9).
    assert.equal(tookIt.size, 2, 'both nodes took some of the transactions');
  });
});
