/**
 * The devnet as one chain behind the gateway (the README's setup: two nodes, one pool; the gateway may
 * pick either node for any call): viem (50 × send, wait for the receipt, read nonce and balance, send the
 * next) and ethers (the same 50 ×, then two transfers back to back) run side by side with no error and no
 * stale read, and the nodes report the same hash at every height afterwards.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseEther as ethersParseEther, JsonRpcProvider, Network, Wallet } from 'ethers';
import { createPublicClient, createWalletClient, http, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { sepolia } from 'viem/chains';
import { startApp, type TestApp } from '../helpers/app.js';
import { assertEachOnce, DEV_KEYS, oneChain } from '../helpers/devnet-chain.js';

const RECIPIENT = '0x000000000000000000000000000000000000bEEF';
const CHAIN_ID = 11155111;

let app: TestApp;
before(async () => {
  app = await startApp({
    devnet: { enabled: true, base_port: 0, nodes: 2 },
    networks: { sepolia: { chain_id: CHAIN_ID, pools: ['sepolia-devnet'] } },
  });
});
after(() => app?.close());

describe('the devnet through the gateway', () => {
  it('viem and ethers scripts see no nonce error and no stale read', async () => {
    const url = app.rpcUrl();
    const viemScript = async (): Promise<string[]> => {
      const account = privateKeyToAccount(DEV_KEYS[0]);
      const wallet = createWalletClient({ account, chain: sepolia, transport: http(url) });
      const reader = createPublicClient({ chain: sepolia, transport: http(url) });
      const start = await reader.getTransactionCount({ address: account.address, blockTag: 'pending' });
      const hashes: string[] = [];
      for (let i = 1; i <= 50; i += 1) {
        const balance = await reader.getBalance({ address: account.address });
        const hash = await wallet.sendTransaction({ to: RECIPIENT, value: parseEther('0.001') });
        const receipt = await reader.waitForTransactionReceipt({ hash, pollingInterval: 20, timeout: 20_000 });
        assert.equal(receipt.status, 'success');
        assert.equal(await reader.getTransactionCount({ address: account.address, blockTag: 'pending' }), start + i);
        const spent = parseEther('0.001') + receipt.gasUsed * receipt.effectiveGasPrice;
        assert.equal(await reader.getBalance({ address: account.address }), balance - spent, `balance after ${i}`);
        hashes.push(hash);
      }
      return hashes;
    };
    const ethersScript = async (): Promise<string[]> => {
      const network = Network.from(CHAIN_ID);
      const provider = new JsonRpcProvider(url, network, {
        staticNetwork: network,
        cacheTimeout: -1,
        pollingInterval: 20,
      });
      const wallet = new Wallet(DEV_KEYS[1], provider);
      const hashes: string[] = [];
      for (let i = 1; i <= 50; i += 1) {
        const balance = await provider.getBalance(wallet.address);
        const tx = await wallet.sendTransaction({ to: RECIPIENT, value: ethersParseEther('0.001') });
        const receipt = await tx.wait(1, 20_000);
        assert.equal(receipt?.status, 1);
        assert.equal(await provider.getTransactionCount(wallet.address, 'pending'), tx.nonce + 1);
        const spent = ethersParseEther('0.001') + (receipt?.gasUsed ?? 0n) * (receipt?.gasPrice ?? 0n);
        assert.equal(await provider.getBalance(wallet.address), balance - spent, `balance after ${i}`);
        hashes.push(tx.hash);
      }
      // Two transfers back to back (each waits only for the node's answer), then both receipts.
      const first = await wallet.sendTransaction({ to: RECIPIENT, value: ethersParseEther('0.001') });
      const second = await wallet.sendTransaction({ to: RECIPIENT, value: ethersParseEther('0.001') });
      for (const receipt of await Promise.all([first.wait(1, 20_000), second.wait(1, 20_000)])) {
        assert.equal(receipt?.status, 1);
      }
      assert.equal(await provider.getTransactionCount(wallet.address, 'pending'), second.nonce + 1);
      hashes.push(first.hash, second.hash);
      return hashes;
    };
    const sent = (await Promise.all([viemScript(), ethersScript()])).flat();
    const devnet = app.devnet;
    assert.ok(devnet);
    assertEachOnce(await oneChain(devnet.nodes.map((node) => node.url)), sent);
  });
});
