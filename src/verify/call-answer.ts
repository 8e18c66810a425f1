/**
 * What a locally executed eth_call / eth_estimateGas answers, in the JSON-RPC shapes origins use:
 *
 * - success: `{ result }` — the return data (eth_call) or the gas quantity (eth_estimateGas);
 * - revert: `{ error: { code: 3, message, data } }` with the revert data; the message is "execution
 *   reverted", followed by ": <reason>" for `Error(string)` and ": panic: <kind> (0x..)" for
 *   `Panic(uint256)` — anvil's wording (geth words panics differently; clients read `data`);
 * - any other halt (out of gas, invalid opcode, …) or a refused call (funds, fee below base fee):
 *   `{ error: { code: -32000, message } }`, the message geth's where one maps (anvil answers these with
 *   other codes and words; a client can rely on the failure, not on its wording).
 */
import { bytesToUtf8 } from '@ethereumjs/util';
import { type Hex, toHex } from './encoding.js';

export interface LocalCallError {
  readonly code: number;
  readonly message: string;
  readonly data?: Hex;
}

export type LocalCallAnswer = { readonly result: Hex } | { readonly error: LocalCallError };

/** JSON-RPC code of a revert (execution-apis, geth, anvil). */
export const REVERT_CODE = 3;
/** JSON-RPC code geth gives every other failed call. */
export const CALL_FAILED_CODE = -32000;

const ERROR_SELECTOR = '0x08c379a0';
const PANIC_SELECTOR = '0x4e487b71';

/** Panic codes of Solidity ≥ 0.8 and anvil's words for them. */
const PANIC_KINDS: Readonly<Record<number, string>> = {
  0: 'generic/unspecified error',
  1: 'assertion failed',
  17: 'arithmetic underflow or overflow',
  18: 'division or modulo by zero',
  33: 'attempted to convert to an invalid type',
  34: 'accessed storage with incorrect encoding',
  49: 'popped from empty array',
  50: 'array out-of-bounds access',
  65: 'out of memory',
  81: 'called an invalid internal function',
};

/** ethereumjs halt reasons and geth's words for them. */
const HALT_MESSAGES: Readonly<Record<string, string>> = {
  'out of gas': 'out of gas',
  'invalid JUMP': 'invalid jump destination',
  'static state change': 'write protection',
  'code store out of gas': 'contract creation code storage out of gas',
  'code size to deposit exceeds maximum code size': 'max code size exceeded',
  'create collision': 'contract address collision',
  'stack underflow': 'stack underflow',
  'stack overflow': 'stack limit reached 1024',
  'invalid opcode': 'invalid opcode',
  'initcode exceeds max initcode size': 'max initcode size exceeded',
};

function word(data: Uint8Array, index: number): bigint | undefined {
  const start = 4 + index * 32;
  if (data.length < start + 32) return undefined;
  return BigInt(toHex(data.subarray(start, start + 32)));
}

/** The reason of `Error(string)` or `Panic(uint256)` revert data, as anvil words it. */
export function revertReason(data: Uint8Array): string | undefined {
  const selector = toHex(data.subarray(0, 4));
  if (selector === PANIC_SELECTOR) {
    const code = word(data, 0);
    if (code === undefined) return undefined;
    const kind = PANIC_KINDS[Number(code)] ?? 'unknown code';
    return `panic: ${kind} (0x${code.toString(16).padStart(2, '0')})`;
  }
  if (selector !== ERROR_SELECTOR) return undefined;
  const offset = word(data, 0);
  if (offset === undefined || offset > BigInt(data.length)) return undefined;
  const at = 4 + Number(offset);
  const length = data.length >= at + 32 ? BigInt(toHex(data.subarray(at, at + 32))) : undefined;
  if (length === undefined || BigInt(at + 32) + length > BigInt(data.length)) return undefined;
  try {
    return bytesToUtf8(data.subarray(at + 32, at + 32 + Number(length)));
  } catch {
    return undefined;
  }
}

export function revertAnswer(data: Uint8Array): LocalCallAnswer {
  const reason = revertReason(data);
  const message = reason === undefined ? 'execution reverted' : `execution reverted: ${reason}`;
  return { error: { code: REVERT_CODE, message, data: toHex(data) } };
}

export function haltAnswer(halt: string): LocalCallAnswer {
  return { error: { code: CALL_FAILED_CODE, message: HALT_MESSAGES[halt] ?? halt } };
}

export function failedAnswer(message: string): LocalCallAnswer {
  return { error: { code: CALL_FAILED_CODE, message } };
}
