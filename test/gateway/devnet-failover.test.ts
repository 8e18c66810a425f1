/**
 * The devnet stays one chain when its leader fails (SPEC §9, README "Try it" kills the first PID):
 * - killed by PID mid-run (three nodes, clients on the other two): the next node takes over, the clients'
 *   transactions keep being mined, each exactly once, and the live nodes report the same hash at every
 *   height;
 * - stopped (SIGSTOP): another node leads within about a second, the stopped node's address refuses
 *   clients (503) instead of serving an old chain, and after SIGCONT it catches up before it answers
 *   again; a transaction that reached it while it was stopped ends up in the chain once.
 */
import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import { parseEther as ethersParseEther, JsonRpcProvider, Network, Wallet } from 'ethers';
import { createPublicClient, createWalletClient, type Hash, http, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { sepolia } from 'viem/chains';
import { buildConfig } from '../../src/config/load.js';
import { type Devnet, startDevnet } from '../../src/devnet/devnet.js';
import { createLogger, type LogLevel } from '../../src/log.js';
import { isPidAlive } from '../helpers/anvil.js';
import { assertEachOnce, call, DEV_KEYS, oneChain, waitFor } from '../helpers/devnet-chain.js';
import { post } from '../helpers/http.js';

const RECIPIENT = '0x000000000000000000000000000000000000bEEF';
const CHAIN_ID = 11155111;

let devnet: Devnet | undefined;
const stopped: number[] = [];
afterEach(async () => {
  for (const pid of stopped.splice(0)) if (isPidAlive(pid)) process.kill(pid, 'SIGCONT');
  await devnet?.stop();
  devnet = undefined;
});
after(() => devnet?.stop());

async function start(nodes: number): Promise<Devnet> {
  const config = buildConfig(
    {
      devnet: { enabled: true, base_port: 0, nodes },
      networks: { sepolia: { chain_id: CHAIN_ID, pools: ['sepolia-devnet'] } },
    },
    'test',
  ).devnet!;
  const level = (process.env.SWITCHYARD_TEST_LOG as LogLevel | undefined) ?? 'silent';
  devnet = await startDevnet(config, createLogger({ level }), () => Date.now());
  return devnet;
}

/** viem: send, wait for the receipt on the same node, repeat; `onEach` runs after each receipt. */
async function viemTransfers(key: `0x${string}`, url: string, count: number, onEach?: (i: number) => void) {
  const transport = http(url);
  const wallet = createWalletClient({ account: privateKeyToAccount(key), chain: sepolia, transport });
  const reader = createPublicClient({ chain: sepolia, transport });
  const hashes: Hash[] = [];
  for (let i = 0; i < count; i += 1) {
    const hash = await wallet.sendTransaction({ to: RECIPIENT, value: parseEther('0.01') });
    assert.equal(
      (await reader.waitForTransactionReceipt({ hash, pollingInterval: 20, timeout: 20_000 })).status,
      'success',
    );
    hashes.push(hash);
    onEach?.(i);
  }
  return hashes;
}

/** ethers: `rounds` × two back-to-back transfers, then both receipts. */
async function ethersPairs(key: string, url: string, rounds: number): Promise<string[]> {
  const network = Network.from(CHAIN_ID);
  const provider = new JsonRpcProvider(url, network, { staticNetwork: network, cacheTimeout: -1, pollingInterval: 20 });
  const wallet = new Wallet(key, provider);
  const hashes: string[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const first = await wallet.sendTransaction({ to: RECIPIENT, value: ethersParseEther('0.01') });
    const second = await wallet.sendTransaction({ to: RECIPIENT, value: ethersParseEther('0.01') });
    for (const receipt of await Promise.all([first.wait(1, 20_000), second.wait(1, 20_000)])) {
      assert.equal(receipt?.status, 1);
    }
    hashes.push(first.hash, second.hash);
  }
  return hashes;
}

function role(net: Devnet, name: string): string | undefined {
  return net.replication().find((node) => node.name === name)?.role;
}

describe('devnet failover', () => {
  it('killing the leader by PID mid-run: the next node leads, nothing is lost, the live nodes are one chain', async () => {
    const net = await start(3);
    const [first, second, third] = net.nodes.map((node) => node.url) as [string, string, string];
    let killedAt = 0;
    const kill = (i: number): void => {
      if (i !== 2 || killedAt !== 0) return;
      killedAt = Date.now();
      process.kill(net.pids[0] as number, 'SIGKILL');
    };
    const sent = (
      await Promise.all([
        viemTransfers(DEV_KEYS[0], second, 6, kill),
        viemTransfers(DEV_KEYS[1], third, 6),
        ethersPairs(DEV_KEYS[2], third, 3),
        ethersPairs(DEV_KEYS[3], second, 3),
      ])
    ).flat();
    assert.ok(killedAt > 0, 'the leader was killed mid-run');
    await waitFor(() => role(net, 'anvil-1') === 'leader', 'anvil-1 leading');
    assert.equal(role(net, 'anvil-0'), 'exited');
    await assert.rejects(
      post(first, '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'),
      /ECONNREFUSED/,
    );
    const chain = await oneChain([second, third]);
    assertEachOnce(chain, sent);
    const after = await viemTransfers(DEV_KEYS[4], third, 2);
    assertEachOnce(await oneChain([second, third]), [...sent, ...after]);
  });

  it('a stopped leader (SIGSTOP) is replaced within about a second and catches up before it answers again', async () => {
    const net = await start(2);
    const [first, second] = net.nodes.map((node) => node.url) as [string, string];
    const before = await viemTransfers(DEV_KEYS[0], first, 2);
    const pid = net.pids[0] as number;
    process.kill(pid, 'SIGSTOP');
    stopped.push(pid);
    const stoppedAt = Date.now();
    // Reaches the proxy before the failover, so it waits in the stopped node's socket.
    const account = privateKeyToAccount(DEV_KEYS[5]);
    const held = await account.signTransaction({
      chainId: CHAIN_ID,
      to: RECIPIENT,
      value: 1n,
      nonce: 0,
      gas: 21_000n,
      maxFeePerGas: 50_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
    const heldAnswer = post(
      first,
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [held] }),
    );
    await waitFor(() => role(net, 'anvil-1') === 'leader', 'anvil-1 leading', 5000);
    const failoverMs = Date.now() - stoppedAt;
    assert.ok(failoverMs < 3000, `failover took ${failoverMs} ms`);
    const refused = await post(first, '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}');
    assert.equal(refused.status, 503, 'the stopped, demoted node refuses clients');
    assert.match(refused.text, /catching up/);

    const during = await viemTransfers(DEV_KEYS[1], second, 3);
    const leaderHeight = Number(await call<string>(second, 'eth_blockNumber'));
    process.kill(pid, 'SIGCONT');
    stopped.splice(stopped.indexOf(pid), 1);
    const heldHash = (await heldAnswer).json<{ result?: string }>().result;
    assert.match(heldHash ?? '', /^0x[0-9a-f]{64}$/, 'the stopped node took the held transaction when it continued');
    // Its first answer after coming back is already the chain's head, never the old one.
    let firstAnswer: number | undefined;
    await waitFor(async () => {
      const answer = await post(first, '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}');
      if (answer.status === 200) firstAnswer = Number(answer.json<{ result: string }>().result);
      return firstAnswer !== undefined;
    }, 'anvil-0 answering again');
    assert.ok((firstAnswer as number) >= leaderHeight, `first answer ${firstAnswer} ≥ ${leaderHeight}`);
    await waitFor(
      async () => (await call(second, 'eth_getTransactionReceipt', [heldHash])) !== null,
      'the held transaction mined',
    );
    assertEachOnce(await oneChain([first, second]), [...before, ...during, heldHash as string]);
    assert.deepEqual(
      net.replication().map((node) => [node.name, node.role]),
      [
        ['anvil-0', 'follower'],
        ['anvil-1', 'leader'],
      ],
    );
  });
});
