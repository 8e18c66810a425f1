/**
 * Two anvil nodes holding the same chain, block for block, for the batch equivalence test
 * (batch-equivalence.test.ts): one answers the batches, the other the same calls one at a time, so a
 * write can be sent to each exactly once and both answers still compare exactly (same signed bytes, same
 * state: same hash or same error).
 *
 * Both start with mining off (`--no-mining`) and the helper's fixed genesis timestamp, then take the same
 * transactions and the same `evm_mine` calls, each with an explicit timestamp: a small contract (its
 * deployment logs one event and stores 42; a call with empty data returns 42, any other data reverts
 * with 7) and three transfers in block 1, empty blocks up to 0x50, one more transfer in block 0x51.
 * anvil calls `head - 64` finalized, so block 1 and its transactions are final (cacheable) and block 0x51
 * is not. After that nothing is ever mined: transactions sent by the test stay in both pools and every
 * read at `latest` or a number sees a frozen chain. The nodes are checked to agree on the head block's
 * hash before the fixture is handed out.
 *
 * Not `anvil_mine` with an interval for the empty blocks: its first block's time is anvil's clock, which
 * runs on with the wall clock after an explicit timestamp. When a second ticked between the two mining
 * calls on one node and not on the other, the nodes' blocks differed from there on (a CI run failed so).
 */
import { keccak256 } from 'viem';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';

const MNEMONIC = 'test test test test test test test test test test test junk';
const CHAIN_ID = 11_155_111;
const GENESIS_TIME = 1_700_000_000;
const BLOCK_SECONDS = 12;
export const RECIPIENT = '0x000000000000000000000000000000000000bEEF';
/** An account with nothing in it (its key appears nowhere else). */
const EMPTY_KEY = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba';

// Init: SSTORE(0, 42), LOG0(memory[0..32]), CODECOPY the 25-byte runtime and RETURN it. Runtime: with no
// calldata return 42 as a word, else REVERT with the word 7.
const RUNTIME = '36600e57602a60005260206000f35b600760005260206000fd';
const INIT = `0x602a60005560206000a06019601660003960196000f3${RUNTIME}`;

export interface BatchChain {
  /** [batches' node, one-at-a-time node] */
  readonly nodes: readonly [AnvilNode, AnvilNode];
  readonly head: number;
  readonly finalized: number;
  readonly contract: string;
  /** Funded accounts that sent transactions during setup, and some that never did. */
  readonly accounts: readonly string[];
  /** Hashes of blocks at or below the finalized block, and above it. */
  readonly finalBlocks: readonly string[];
  readonly recentBlocks: readonly string[];
  /** Mined transactions in a final block, and in the head block. */
  readonly finalTxs: readonly string[];
  readonly recentTxs: readonly string[];
  /** Signed transactions never sent: each is accepted by each node (a hash); sent again, its hash again (the node answers "already imported", which the gateway answers as success). */
  readonly freshWrites: readonly string[];
  /** The transaction hash of each of `freshWrites`, same order. */
  readonly freshHashes: readonly string[];
  /** Signed transactions each node refuses every time with the same error (decode, nonce, funds, fee, chain). */
  readonly failingWrites: readonly string[];
  stop(): Promise<void>;
}

async function call(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const answer = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (answer.error !== undefined) throw new Error(`${method}: ${answer.error.message}`);
  return answer.result;
}

/** Waits (bounded) until the node's pool holds `count` pending transactions: a send may answer before that. */
async function pooled(url: string, count: number): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const status = (await call(url, 'txpool_status')) as { pending: string };
    if (Number(status.pending) === count) return;
    if (Date.now() > deadline) throw new Error(`anvil pool holds ${Number(status.pending)} transactions, not ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

type Account = ReturnType<typeof mnemonicToAccount>;
const FEES = { maxFeePerGas: 20_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n } as const;

function transfer(
  account: Pick<Account, 'signTransaction'>,
  nonce: number,
  extra: Record<string, unknown> = {},
): Promise<string> {
  return account.signTransaction({
    chainId: CHAIN_ID,
    type: 'eip1559',
    to: RECIPIENT,
    value: BigInt(1000 + nonce),
    nonce,
    gas: 21_000n,
    ...FEES,
    ...extra,
  });
}

export async function startBatchChain(): Promise<BatchChain> {
  const accounts = Array.from({ length: 10 }, (_, i) => mnemonicToAccount(MNEMONIC, { addressIndex: i }));
  const [deployer, a1, a2, a3, a4] = accounts as [Account, Account, Account, Account, Account];
  const deploy = await deployer.signTransaction({
    chainId: CHAIN_ID,
    type: 'eip1559',
    data: INIT,
    nonce: 0,
    gas: 200_000n,
    ...FEES,
  });
  const block1 = [deploy, await transfer(a1, 0), await transfer(a2, 0), await transfer(a3, 0)];
  const headTx = await transfer(a1, 1);

  const freshWrites: string[] = [];
  for (const account of accounts.slice(5)) {
    for (let nonce = 0; nonce < 10; nonce += 1) freshWrites.push(await transfer(account, nonce));
  }
  const failingWrites = [
    '0x01', // not a transaction
    await transfer(a1, 0, { value: 5n }), // nonce too low (a1 sent nonces 0 and 1)
    await transfer(privateKeyToAccount(EMPTY_KEY), 0), // insufficient funds
    await transfer(a4, 0, { maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }), // below the base fee
    await transfer(a4, 0, { gas: 20_000n }), // intrinsic gas too low
    await transfer(a4, 0, { chainId: 1 }), // another chain
  ];

  const nodes = await Promise.all([
    startTestAnvil({ noMining: true, order: 'fifo' }),
    startTestAnvil({ noMining: true, order: 'fifo' }),
  ]);
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
  };
  try {
    const heads: string[] = [];
    for (const node of nodes) {
      for (const raw of block1) await call(node.url, 'eth_sendRawTransaction', [raw]);
      await pooled(node.url, block1.length);
      await call(node.url, 'evm_mine', [{ timestamp: GENESIS_TIME + BLOCK_SECONDS }]);
      for (let height = 2; height <= 0x50; height += 1) {
        await call(node.url, 'evm_mine', [{ timestamp: GENESIS_TIME + height * BLOCK_SECONDS }]);
      }
      await call(node.url, 'eth_sendRawTransaction', [headTx]);
      await pooled(node.url, 1);
      await call(node.url, 'evm_mine', [{ timestamp: GENESIS_TIME + 0x51 * BLOCK_SECONDS }]);
      heads.push(((await call(node.url, 'eth_getBlockByNumber', ['latest', false])) as { hash: string }).hash);
    }
    if (heads[0] !== heads[1]) throw new Error(`the two anvil nodes disagree on the head: ${heads.join(' ')}`);
    const url = nodes[0]?.url as string;
    const block = async (n: number) =>
      (await call(url, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])) as {
        hash: string;
        transactions: string[];
      };
    const head = Number(await call(url, 'eth_blockNumber'));
    const finalized = Number(
      ((await call(url, 'eth_getBlockByNumber', ['finalized', false])) as { number: string }).number,
    );
    const first = await block(1);
    const receipt = (await call(url, 'eth_getTransactionReceipt', [first.transactions[0]])) as {
      contractAddress: string;
    };
    return {
      nodes: [nodes[0] as AnvilNode, nodes[1] as AnvilNode],
      head,
      finalized,
      contract: receipt.contractAddress,
      accounts: accounts.map((account) => account.address),
      finalBlocks: [(await block(0)).hash, first.hash, (await block(finalized)).hash],
      recentBlocks: [(await block(finalized + 1)).hash, (await block(head)).hash],
      finalTxs: first.transactions,
      recentTxs: (await block(head)).transactions,
      freshWrites,
      freshHashes: freshWrites.map((raw) => keccak256(raw as `0x${string}`)),
      failingWrites,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
