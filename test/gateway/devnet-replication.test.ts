/**
 * The devnet is one chain (SPEC §9): real anvil nodes started by the product's launcher, viem and ethers v6
 * clients straight at each node's URL. Afterwards every node reports the same block hash at every height,
 * each transaction is mined exactly once, and balances and nonces agree — with a block per transaction
 * (automine on the leader), with interval mining (block_time 0.5 s), when a user mines on a follower, and
 * when a follower holds a transaction the leader cannot mine yet (nonce gap).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseEther as ethersParseEther, JsonRpcProvider, Network, Wallet } from 'ethers';
import { createPublicClient, createWalletClient, type Hash, http, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { sepolia } from 'viem/chains';
import { buildConfig } from '../../src/config/load.js';
import { type Devnet, startDevnet } from '../../src/devnet/devnet.js';
import { createLogger, type LogLevel } from '../../src/log.js';
import { assertEachOnce, call, DEV_KEYS, oneChain, waitFor } from '../helpers/devnet-chain.js';
import { post } from '../helpers/http.js';

const RECIPIENT = '0x000000000000000000000000000000000000bEEF';
const CHAIN_ID = 11155111;

function devnetConfig(blockTime: number) {
  return buildConfig(
    {
      devnet: { enabled: true, base_port: 0, nodes: 2, block_time: blockTime },
      networks: { sepolia: { chain_id: CHAIN_ID, pools: ['sepolia-devnet'] } },
    },
    'test',
  ).devnet!;
}

/** Silent unless SWITCHYARD_TEST_LOG names a level. */
function testLogger() {
  return createLogger({ level: (process.env.SWITCHYARD_TEST_LOG as LogLevel | undefined) ?? 'silent' });
}

function viemClient(key: `0x${string}`, url: string) {
  const transport = http(url);
  return {
    wallet: createWalletClient({ account: privateKeyToAccount(key), chain: sepolia, transport }),
    reader: createPublicClient({ chain: sepolia, transport }),
  };
}

function ethersWallet(key: string, url: string): Wallet {
  const network = Network.from(CHAIN_ID);
  // cacheTimeout -1: ethers' own 250 ms call cache would hand out a stale nonce even against one node.
  return new Wallet(
    key,
    new JsonRpcProvider(url, network, { staticNetwork: network, cacheTimeout: -1, pollingInterval: 20 }),
  );
}

/** `count` transfers from a viem client: send, wait for the receipt on the same node, send the next. */
async function viemTransfers(key: `0x${string}`, url: string, count: number): Promise<Hash[]> {
  const { wallet, reader } = viemClient(key, url);
  const hashes: Hash[] = [];
  for (let i = 0; i < count; i += 1) {
    const hash = await wallet.sendTransaction({ to: RECIPIENT, value: parseEther('0.01') });
    const receipt = await reader.waitForTransactionReceipt({ hash, pollingInterval: 20, timeout: 20_000 });
    assert.equal(receipt.status, 'success');
    hashes.push(hash);
  }
  return hashes;
}

/** `rounds` × two back-to-back ethers transfers (no wait in between), then wait for both receipts. */
async function ethersPairs(key: string, url: string, rounds: number): Promise<string[]> {
  const wallet = ethersWallet(key, url);
  const hashes: string[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const first = await wallet.sendTransaction({ to: RECIPIENT, value: ethersParseEther('0.01') });
    const second = await wallet.sendTransaction({ to: RECIPIENT, value: ethersParseEther('0.01') });
    assert.equal(second.nonce, first.nonce + 1, 'the second transfer took the next nonce');
    const receipts = await Promise.all([first.wait(1, 20_000), second.wait(1, 20_000)]);
    for (const receipt of receipts) assert.equal(receipt?.status, 1);
    hashes.push(first.hash, second.hash);
  }
  return hashes;
}

async function assertSameAccounts(urls: readonly string[]): Promise<void> {
  const addresses = [RECIPIENT, ...DEV_KEYS.map((key) => privateKeyToAccount(key).address)];
  for (const address of addresses) {
    const balances = await Promise.all(urls.map((url) => call<string>(url, 'eth_getBalance', [address, 'latest'])));
    assert.equal(new Set(balances).size, 1, `balance of ${address}: ${balances}`);
    const nonces = await Promise.all(
      urls.flatMap((url) =>
        ['latest', 'pending'].map((tag) => call<string>(url, 'eth_getTransactionCount', [address, tag])),
      ),
    );
    assert.equal(new Set(nonces).size, 1, `nonces of ${address} (latest, pending per node): ${nonces}`);
  }
}

describe('devnet replication, a block per transaction', () => {
  let devnet: Devnet;
  let urls: string[];
  before(async () => {
    devnet = await startDevnet(devnetConfig(0), testLogger(), () => Date.now());
    urls = devnet.nodes.map((node) => node.url);
  });
  after(() => devnet?.stop());

  it('viem and ethers clients on both nodes, interleaved: one chain, each transaction once', async () => {
    const [leader, follower] = urls as [string, string];
    const sent = (
      await Promise.all([
        viemTransfers(DEV_KEYS[0], leader, 6),
        viemTransfers(DEV_KEYS[1], follower, 6),
        ethersPairs(DEV_KEYS[2], follower, 3),
        ethersPairs(DEV_KEYS[3], leader, 3),
      ])
    ).flat();
    const chain = await oneChain(urls);
    assert.ok(chain.height >= 2, `several blocks mined (height ${chain.height})`);
    assertEachOnce(chain, sent);
    await assertSameAccounts(urls);
    assert.deepEqual(
      devnet.replication().map((node) => [node.name, node.role, node.inStep]),
      [
        ['anvil-0', 'leader', true],
        ['anvil-1', 'follower', true],
      ],
    );
  });

  it('a transaction held by a follower (nonce gap) is mined once the gap is filled on the leader', async () => {
    const [leader, follower] = urls as [string, string];
    const earlier = (await oneChain(urls)).txs;
    const account = privateKeyToAccount(DEV_KEYS[4]);
    const nonce = Number(await call<string>(leader, 'eth_getTransactionCount', [account.address, 'pending']));
    const sign = (n: number) =>
      account.signTransaction({
        chainId: CHAIN_ID,
        to: RECIPIENT,
        value: 1n,
        nonce: n,
        gas: 21_000n,
        maxFeePerGas: 20_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      });
    const later = await call<string>(follower, 'eth_sendRawTransaction', [await sign(nonce + 1)]);
    const first = await call<string>(leader, 'eth_sendRawTransaction', [await sign(nonce)]);
    await waitFor(
      async () => (await call(follower, 'eth_getTransactionReceipt', [later])) !== null,
      'the held transaction mined and replayed',
    );
    assertEachOnce(await oneChain(urls), [...earlier, first, later]);
    await assertSameAccounts(urls);
  });

  it('blocks a user mines on a follower (evm_mine, anvil_mine) become the chain’s', async () => {
    const [leader, follower] = urls as [string, string];
    const earlier = await oneChain(urls);
    const start = earlier.height;
    await call(follower, 'evm_mine', []);
    await call(follower, 'anvil_mine', ['0x3']);
    await waitFor(
      async () => Number(await call<string>(leader, 'eth_blockNumber')) === start + 4,
      'the leader adopting the 4 blocks',
    );
    const chain = await oneChain(urls);
    assert.equal(chain.height, start + 4);
    const sent = await viemTransfers(DEV_KEYS[5], follower, 1);
    assertEachOnce(await oneChain(urls), [...earlier.txs, ...sent]);
  });
  it('mining calls sent to a follower act on the whole devnet (automine off, evm_mine, automine on)', async () => {
    const [leader, follower] = urls as [string, string];
    const earlier = await oneChain(urls);
    assert.equal(await call(follower, 'evm_setAutomine', [false]), null);
    assert.equal(await call(leader, 'anvil_getAutomine'), false);
    const a = viemClient(DEV_KEYS[0], leader).wallet;
    const b = viemClient(DEV_KEYS[1], follower).wallet;
    const sent = [
      await a.sendTransaction({ to: RECIPIENT, value: parseEther('0.01') }),
      await b.sendTransaction({ to: RECIPIENT, value: parseEther('0.01') }),
    ];
    // Pending on every node (each node's pending nonce counts both), mined on none.
    const senders = [a.account.address, b.account.address];
    await waitFor(async () => {
      const counts = await Promise.all(
        urls.flatMap((url) =>
          senders.flatMap((address) =>
            ['latest', 'pending'].map((tag) => call<string>(url, 'eth_getTransactionCount', [address, tag])),
          ),
        ),
      );
      return counts.every((count, i) => Number(count) - Number(counts[i - (i % 2)]) === i % 2);
    }, 'both transactions pending on every node');
    assert.equal((await oneChain(urls)).height, earlier.height, 'no block without automine');
    await call(follower, 'evm_mine', []);
    const chain = await oneChain(urls);
    assert.equal(chain.height, earlier.height + 1);
    assert.deepEqual([...chain.txs.slice(-2)].sort(), [...sent].sort(), 'one block with both');
    assert.equal(await call(follower, 'evm_setAutomine', [true]), null);
    assertEachOnce(chain, [...earlier.txs, ...sent]);
    const automined = await viemTransfers(DEV_KEYS[0], follower, 1);
    assertEachOnce(await oneChain(urls), [...earlier.txs, ...sent, ...automined]);
  });
  it('evm_snapshot and evm_revert sent to a follower take the whole devnet back; state cheats are refused', async () => {
    const [leader, follower] = urls as [string, string];
    const before = await oneChain(urls);
    const snapshot = await call<string>(follower, 'evm_snapshot');
    const reverted = await viemTransfers(DEV_KEYS[1], leader, 2);
    assert.equal((await oneChain(urls)).height, before.height + 2);
    assert.equal(await call(follower, 'evm_revert', [snapshot]), true);
    const back = await oneChain(urls);
    assert.deepEqual(back.hashes, before.hashes, 'every node back at the snapshot');
    for (const url of urls) {
      for (const hash of reverted) assert.equal(await call(url, 'eth_getTransactionReceipt', [hash]), null);
    }
    const after = await viemTransfers(DEV_KEYS[1], follower, 1);
    assertEachOnce(await oneChain(urls), [...before.txs, ...after]);

    const cheat = await post(
      follower,
      JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'anvil_setBalance', params: [RECIPIENT, '0x1'] }),
    );
    const refused = cheat.json<{ id: number; error?: { code: number; message: string } }>();
    assert.equal(refused.id, 7);
    assert.equal(refused.error?.code, -32000);
    assert.match(refused.error?.message ?? '', /devnet\.nodes: 1/);
    await assertSameAccounts(urls);
  });
});

describe('devnet replication, interval mining (block_time 0.5 s)', () => {
  let devnet: Devnet;
  before(async () => {
    devnet = await startDevnet(devnetConfig(0.5), testLogger(), () => Date.now());
  });
  after(() => devnet?.stop());

  it('empty and full blocks are identical on both nodes', async () => {
    const urls = devnet.nodes.map((node) => node.url);
    const [leader, follower] = urls as [string, string];
    const sent = (
      await Promise.all([
        viemTransfers(DEV_KEYS[0], follower, 2),
        viemTransfers(DEV_KEYS[1], leader, 2),
        ethersPairs(DEV_KEYS[2], follower, 1),
      ])
    ).flat();
    const height = Number(await call<string>(leader, 'eth_blockNumber'));
    await waitFor(
      async () => Number(await call<string>(follower, 'eth_blockNumber')) >= height + 2,
      'two more (empty) blocks on the follower',
    );
    const chain = await oneChain(urls);
    assertEachOnce(chain, sent);
    await assertSameAccounts(urls);
  });
});
