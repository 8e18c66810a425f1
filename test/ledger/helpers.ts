/**
 * Shared parts of the ledger's scenario tests (SPEC §19): an app in front of one real anvil node that
 * mines only when told, anvil's first two dev accounts signing with viem, a clock the test can move
 * forward, and reads of the ledger's records through the API's own queries.
 */

import { privateKeyToAccount } from 'viem/accounts';
import type { Clock } from '../../src/clock.js';
import { getRecord } from '../../src/ledger/record-queries.js';
import type { LedgerStatus, TransactionRecord } from '../../src/ledger/types.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp, type TestAppOptions } from '../helpers/app.js';

export const CHAIN_ID = 11_155_111;
/** anvil's dev accounts 0 and 1. */
export const ALICE = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
export const BOB = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

/** A clock at real speed that a test can move forward (`advance`), both readings together. */
export class ShiftClock implements Clock {
  #offset = 0;
  now(): number {
    return Date.now() + this.#offset;
  }
  monotonic(): number {
    return performance.now() + this.#offset;
  }
  advance(ms: number): void {
    this.#offset += ms;
  }
}

export async function rpc<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const answer = (await res.json()) as { result?: T; error?: { message: string } };
  if (answer.error !== undefined) throw new Error(`${method}: ${answer.error.message}`);
  return answer.result as T;
}

/** A signed transfer of `value` wei from `from` to BOB, with this nonce and fee (gwei). */
export function signTransfer(
  from: typeof ALICE,
  nonce: number,
  options: { value?: bigint; gwei?: bigint; chainId?: number } = {},
): Promise<`0x${string}`> {
  const fee = (options.gwei ?? 10n) * 1_000_000_000n;
  return from.signTransaction({
    type: 'eip1559',
    chainId: options.chainId ?? CHAIN_ID,
    nonce,
    to: BOB.address,
    value: options.value ?? 1n,
    gas: 21_000n,
    maxFeePerGas: fee,
    maxPriorityFeePerGas: fee,
  });
}

export interface LedgerScene {
  readonly node: AnvilNode;
  readonly app: TestApp;
  close(): Promise<void>;
}

/** One anvil node (no mining until told) as pool `p` of `sepolia`, heads polled every 50 ms. */
export async function startScene(
  network: Record<string, unknown> = {},
  raw: Record<string, unknown> = {},
  options: TestAppOptions = {},
): Promise<LedgerScene> {
  const node = await startTestAnvil({ noMining: true });
  let app: TestApp;
  try {
    app = await startApp(
      {
        networks: { sepolia: { chain_id: CHAIN_ID, pools: ['p'], head_poll_interval: 0.05, ...network } },
        pools: [poolOf('p', [node.url])],
        ...raw,
      },
      options,
    );
  } catch (err) {
    await node.stop();
    throw err;
  }
  return {
    node,
    app,
    close: async () => {
      await app.close();
      await node.stop();
    },
  };
}

/** Sends through the gateway; returns the hash the gateway answered. */
export async function sendThroughGateway(
  app: TestApp,
  raw: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const res = await fetch(app.rpcUrl(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }),
  });
  const answer = (await res.json()) as { result?: string; error?: unknown };
  if (typeof answer.result !== 'string') throw new Error(`send refused: ${JSON.stringify(answer)}`);
  return answer.result;
}

export function record(app: TestApp, hash: string): Promise<TransactionRecord | undefined> {
  return getRecord(app.store.db, app.config.account_id, hash);
}

/** Waits (bounded) until the record has this status; sweeps the ledger meanwhile. */
export async function waitForStatus(
  app: TestApp,
  hash: string,
  status: LedgerStatus,
  timeoutMs = 15_000,
): Promise<TransactionRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    app.ledger.sweep();
    await app.ledger.settled();
    const found = await record(app, hash);
    if (found?.status === status) return found;
    if (Date.now() > deadline) {
      throw new Error(`${hash} is ${found?.status ?? 'not recorded'} after ${timeoutMs} ms, not ${status}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
