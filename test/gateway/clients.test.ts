/**
 * Real clients through the gateway against a real anvil origin: viem (with JSON-RPC batching) and
 * ethers v6 read the chain id, the block number and the genesis block, and send a signed transaction
 * that gets mined. The keys are anvil's well-known development keys (accounts #0 and #1).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseEther as ethersParseEther, JsonRpcProvider, Wallet } from 'ethers';
import { createPublicClient, createWalletClient, http, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { sepolia } from 'viem/chains';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { post, type RpcAnswer } from '../helpers/http.js';

const KEY_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const KEY_1 = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const RECIPIENT = '0x000000000000000000000000000000000000dEaD';

let node: AnvilNode;
let app: TestApp;
let genesisHash: string;

before(async () => {
  node = await startTestAnvil();
  app = await startApp({
    networks: { sepolia: { chain_id: 11155111, pools: ['anvil'] } },
    pools: [poolOf('anvil', [node.url])],
  });
  const direct = await post(
    node.url,
    '{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x0",false]}',
  );
  genesisHash = (direct.json<RpcAnswer>().result as { hash: string }).hash;
});

after(async () => {
  await app?.close();
  await node?.stop();
});

describe('viem through the gateway', () => {
  it('reads chain id, block number and the genesis block in one JSON-RPC batch', async () => {
    const bodies: string[] = [];
    const client = createPublicClient({
      chain: sepolia,
      transport: http(app.rpcUrl(), {
        batch: true,
        onFetchRequest: async (request) => {
          bodies.push(await request.clone().text());
        },
      }),
    });
    const [chainId, blockNumber, genesis] = await Promise.all([
      client.getChainId(),
      client.getBlockNumber(),
      client.getBlock({ blockNumber: 0n }),
    ]);
    assert.equal(chainId, 11155111);
    assert.equal(typeof blockNumber, 'bigint');
    assert.equal(genesis.number, 0n);
    assert.equal(genesis.hash, genesisHash);
    assert.ok(
      bodies.some((body) => body.startsWith('[')),
      `viem sent a batch: ${bodies.join(' | ')}`,
    );
  });

  it('sends a signed transaction that gets mined', async () => {
    const account = privateKeyToAccount(KEY_0);
    const transport = http(app.rpcUrl(), { batch: true });
    const wallet = createWalletClient({ account, chain: sepolia, transport });
    const client = createPublicClient({ chain: sepolia, transport });
    const before = await client.getBalance({ address: RECIPIENT });
    const hash = await wallet.sendTransaction({ to: RECIPIENT, value: parseEther('0.5') });
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 20_000 });
    assert.equal(receipt.status, 'success');
    assert.equal(await client.getBalance({ address: RECIPIENT }), before + parseEther('0.5'));
  });
});

describe('ethers v6 through the gateway', () => {
  let provider: JsonRpcProvider;
  before(() => {
    provider = new JsonRpcProvider(app.rpcUrl(), 11155111, { staticNetwork: true, pollingInterval: 50 });
  });
  after(() => provider?.destroy());

  it('reads chain id, block number and the genesis block', async () => {
    const [network, blockNumber, genesis] = await Promise.all([
      provider.getNetwork(),
      provider.getBlockNumber(),
      provider.getBlock(0),
    ]);
    assert.equal(network.chainId, 11155111n);
    assert.equal(typeof blockNumber, 'number');
    assert.equal(genesis?.number, 0);
    assert.equal(genesis?.hash, genesisHash);
    assert.equal(Number((await provider.send('eth_chainId', [])) as string), 11155111);
  });

  it('sends a signed transaction that gets mined', async () => {
    const wallet = new Wallet(KEY_1, provider);
    const tx = await wallet.sendTransaction({ to: RECIPIENT, value: ethersParseEther('0.25') });
    const receipt = await tx.wait(1, 20_000);
    assert.equal(receipt?.status, 1);
    assert.equal(receipt?.hash, tx.hash);
  });
});
