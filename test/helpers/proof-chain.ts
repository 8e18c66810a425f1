/**
 * A real anvil chain for the verification tests: transactions signed locally with viem (anvil's
 * well-known development keys) and sent raw, and two contracts deployed from hand-assembled bytecode:
 *
 * - Vault: storage 0 = 7, 1 = 11, HIGH_SLOT = 13; answers slot 0 + slot 1 + HIGH_SLOT (= 31) as one word.
 * - Reader: storage 0 = the Vault's address, 1 = 100, 2 = 1000, 3 = 10000; its first calldata byte picks:
 *   0 → slots 1+2+3 + the Vault's answer + the Vault's balance; 1 → revert Error("nope");
 *   2 → NUMBER, TIMESTAMP, COINBASE, PREVRANDAO, GASLIMIT, CHAINID, BASEFEE as seven words;
 *   3 → writes slot 1 = 5 and returns it; 4 → BLOCKHASH(NUMBER - 1); 5 → BLOCKHASH(NUMBER - 2);
 *   6 → clears slot 3 (a gas refund: the lowest gas that succeeds is above the gas finally spent).
 */
import assert from 'node:assert/strict';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { type TrustedHeader, verifyHeader } from '../../src/verify/header.js';
import { type AnvilNode, startTestAnvil } from './anvil.js';
import { call, waitFor } from './devnet-chain.js';
import { assemble, at, deployment, label } from './evm-program.js';

/** anvil's development key #0 (its address holds 10000 ETH on every fresh anvil). */
export const FUNDED_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
export const HIGH_SLOT = (1n << 255n) + 5n;
export const VAULT_BALANCE = 123_456n;

const VAULT = assemble([
  ...['PUSH1', 0, 'SLOAD', 'PUSH1', 1, 'SLOAD', 'ADD', 'PUSH32', HIGH_SLOT, 'SLOAD', 'ADD'],
  ...['PUSH1', 0, 'MSTORE', 'PUSH1', 32, 'PUSH1', 0, 'RETURN'],
]);

const returnWord = ['PUSH1', 0, 'MSTORE', 'PUSH1', 32, 'PUSH1', 0, 'RETURN'];
const branch = (selector: number, name: string) => ['DUP1', 'PUSH1', selector, 'EQ', at(name), 'JUMPI'];

const READER = assemble([
  ...['PUSH1', 0, 'CALLDATALOAD', 'PUSH1', 248, 'SHR'],
  ...branch(1, 'revert'),
  ...branch(2, 'context'),
  ...branch(3, 'write'),
  ...branch(4, 'blockhash'),
  ...branch(5, 'older'),
  ...branch(6, 'clear'),
  ...['POP', 'PUSH1', 1, 'SLOAD', 'PUSH1', 2, 'SLOAD', 'ADD', 'PUSH1', 3, 'SLOAD', 'ADD'],
  ...['PUSH1', 32, 'PUSH1', 0, 'PUSH1', 0, 'PUSH1', 0, 'PUSH1', 0, 'PUSH1', 0, 'SLOAD', 'GAS', 'CALL'],
  ...['ISZERO', at('fail'), 'JUMPI', 'PUSH1', 0, 'MLOAD', 'ADD', 'PUSH1', 0, 'SLOAD', 'BALANCE', 'ADD', ...returnWord],
  ...[label('fail'), 'PUSH1', 0, 'PUSH1', 0, 'REVERT'],
  label('revert'),
  ...['PUSH32', `0x08c379a0${'00'.repeat(28)}`, 'PUSH1', 0, 'MSTORE', 'PUSH1', 0x20, 'PUSH1', 4, 'MSTORE'],
  ...['PUSH1', 4, 'PUSH1', 0x24, 'MSTORE', 'PUSH32', `0x${Buffer.from('nope').toString('hex')}${'00'.repeat(28)}`],
  ...['PUSH1', 0x44, 'MSTORE', 'PUSH1', 0x64, 'PUSH1', 0, 'REVERT'],
  label('context'),
  ...['NUMBER', 'PUSH1', 0, 'MSTORE', 'TIMESTAMP', 'PUSH1', 32, 'MSTORE', 'COINBASE', 'PUSH1', 64, 'MSTORE'],
  ...['PREVRANDAO', 'PUSH1', 96, 'MSTORE', 'GASLIMIT', 'PUSH1', 128, 'MSTORE', 'CHAINID', 'PUSH1', 160, 'MSTORE'],
  ...['BASEFEE', 'PUSH1', 192, 'MSTORE', 'PUSH1', 224, 'PUSH1', 0, 'RETURN'],
  label('write'),
  ...['PUSH1', 5, 'PUSH1', 1, 'SSTORE', 'PUSH1', 1, 'SLOAD', ...returnWord],
  label('blockhash'),
  ...['PUSH1', 1, 'NUMBER', 'SUB', 'BLOCKHASH', ...returnWord],
  label('older'),
  ...['PUSH1', 2, 'NUMBER', 'SUB', 'BLOCKHASH', ...returnWord],
  label('clear'),
  ...['PUSH1', 0, 'PUSH1', 3, 'SSTORE', 'PUSH1', 3, 'SLOAD', ...returnWord],
]);

export interface Sender {
  readonly address: Hex;
  /** Signs and sends one transaction; resolves to its hash (anvil mines it unless mining is off). */
  send(tx: Record<string, unknown>): Promise<Hex>;
}

export function sender(url: string, chainId: number, key: Hex = FUNDED_KEY): Sender {
  const account = privateKeyToAccount(key);
  let nonce: number | undefined;
  return {
    address: account.address,
    async send(tx) {
      nonce ??= Number(await call<string>(url, 'eth_getTransactionCount', [account.address, 'pending']));
      const raw = await account.signTransaction({ chainId, nonce: nonce++, gas: 1_000_000n, ...tx } as never);
      return call<Hex>(url, 'eth_sendRawTransaction', [raw]);
    },
  };
}

/** The transaction's receipt once it is mined (bounded wait). */
export async function receipt(url: string, hash: Hex): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | null = null;
  await waitFor(async () => {
    found = await call<Record<string, unknown> | null>(url, 'eth_getTransactionReceipt', [hash]);
    return found !== null;
  }, `a receipt for ${hash}`);
  return found as unknown as Record<string, unknown>;
}

export interface ContractChain {
  readonly node: AnvilNode;
  readonly chainId: number;
  readonly vault: Hex;
  readonly reader: Hex;
}

const CHAIN_ID = 31_337;

/** anvil (automining) with the Vault and the Reader deployed and the Vault funded. */
export async function startContractChain(hardfork?: string): Promise<ContractChain> {
  const node = await startTestAnvil({ chainId: CHAIN_ID, ...(hardfork === undefined ? {} : { hardfork }) });
  try {
    const from = sender(node.url, CHAIN_ID);
    const fees = { gasPrice: 2_000_000_000n };
    const vaultTx = await from.send({
      data: deployment(VAULT, [
        [0n, 7n],
        [1n, 11n],
        [HIGH_SLOT, 13n],
      ]),
      ...fees,
    });
    const vault = (await receipt(node.url, vaultTx)).contractAddress as Hex;
    await from.send({ to: vault, value: VAULT_BALANCE, ...fees });
    const storage = [
      [0n, BigInt(vault)],
      [1n, 100n],
      [2n, 1000n],
      [3n, 10000n],
    ] as const;
    const readerTx = await from.send({ data: deployment(READER, storage), ...fees });
    const reader = (await receipt(node.url, readerTx)).contractAddress as Hex;
    return { node, chainId: CHAIN_ID, vault, reader };
  } catch (err) {
    await node.stop();
    throw err;
  }
}

/** The node's latest block, proven (here trusted because it is the only node), and its number as a tag. */
export async function latestHeader(url: string): Promise<{ header: TrustedHeader; tag: string }> {
  const block = await call<Record<string, unknown>>(url, 'eth_getBlockByNumber', ['latest', false]);
  const verified = await verifyHeader(block);
  assert.ok(verified.ok, JSON.stringify(!verified.ok && verified.failure));
  return { header: verified.value, tag: block.number as string };
}
