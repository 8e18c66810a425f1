/**
 * The devnet keeps its anvil nodes in step: a transaction sent to either node shows up, mined, on the
 * other (same receipt status, same balances, same height), in both directions.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createWalletClient, http, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { sepolia } from 'viem/chains';
import { buildConfig } from '../../src/config/load.js';
import { type Devnet, startDevnet } from '../../src/devnet/devnet.js';
import { silentLogger } from '../../src/log.js';
import { post, type RpcAnswer } from '../helpers/http.js';

const KEY_2 = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a';
const KEY_3 = '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6';
const RECIPIENT = '0x000000000000000000000000000000000000bEEF';

let devnet: Devnet;

before(async () => {
  const config = buildConfig(
    {
      devnet: { enabled: true, base_port: 0, nodes: 2 },
      networks: { sepolia: { chain_id: 11155111, pools: ['sepolia-devnet'] } },
    },
    'test',
  );
  devnet = await startDevnet(config.devnet!, silentLogger, () => Date.now());
});
after(() => devnet?.stop());

async function call(url: string, method: string, params: unknown[]): Promise<unknown> {
  return (await post(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }))).json<RpcAnswer>().result;
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('devnet transaction mirror', () => {
  for (const [from, to, key] of [
    [0, 1, KEY_2],
    [1, 0, KEY_3],
  ] as const) {
    it(`a transaction sent to node ${from} is mined on node ${to} too`, async () => {
      const source = devnet.nodes[from]!.url;
      const target = devnet.nodes[to]!.url;
      const wallet = createWalletClient({ account: privateKeyToAccount(key), chain: sepolia, transport: http(source) });
      const hash = await wallet.sendTransaction({ to: RECIPIENT, value: parseEther('1') });
      await waitFor(async () => (await call(target, 'eth_getTransactionReceipt', [hash])) !== null, 'mirroring');
      const [a, b] = await Promise.all(
        [source, target].map((url) => call(url, 'eth_getTransactionReceipt', [hash]) as Promise<{ status: string }>),
      );
      assert.equal(a?.status, '0x1');
      assert.equal(b?.status, '0x1');
      assert.equal(
        await call(target, 'eth_getBalance', [RECIPIENT, 'latest']),
        await call(source, 'eth_getBalance', [RECIPIENT, 'latest']),
      );
      assert.equal(await call(target, 'eth_blockNumber', []), await call(source, 'eth_blockNumber', []));
    });
  }
});
