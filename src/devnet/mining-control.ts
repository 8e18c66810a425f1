/**
 * The mining calls a client may send to any devnet node, answered for the devnet as a whole instead of by
 * that node (which would then mine a block of its own, or start mining on its own, and leave the chain):
 *
 * | call | what the devnet does |
 * |---|---|
 * | `evm_mine`, `anvil_mine`, `evm_mine_detailed`, `anvil_mine_detailed` | the call runs on the leader, every node replays the blocks, then the leader's answer is returned |
 * | `evm_setAutomine`, `anvil_setAutomine` `[bool]` | the devnet mines a block per transaction (true) or only on request (false) |
 * | `evm_setIntervalMining`, `anvil_setIntervalMining` `[seconds]` | a block every N seconds (0: none; automine off) |
 * | `anvil_getAutomine`, `anvil_getIntervalMining` | the devnet's mode |
 *
 * Only single requests are recognised (a batch goes to the node as it is). Everything else returns
 * undefined from `controlCall` without parsing: the body must name one of the methods first.
 */

export const MINING_CALLS = ['evm_mine', 'anvil_mine', 'evm_mine_detailed', 'anvil_mine_detailed'] as const;
const MODE_CALLS = [
  'evm_setAutomine',
  'anvil_setAutomine',
  'evm_setIntervalMining',
  'anvil_setIntervalMining',
  'anvil_getAutomine',
  'anvil_getIntervalMining',
] as const;

export type ControlMethod = (typeof MINING_CALLS)[number] | (typeof MODE_CALLS)[number];

export interface ControlCall {
  readonly id: unknown;
  readonly method: ControlMethod;
  readonly params: unknown[];
  /** The request as sent (mining calls are passed on to the leader as they are). */
  readonly body: Buffer;
}

const NAMES = new Set<string>([...MINING_CALLS, ...MODE_CALLS]);
const HINTS = ['_mine', 'Automine', 'IntervalMining'];

export function controlCall(body: Buffer): ControlCall | undefined {
  if (!HINTS.some((hint) => body.includes(hint))) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const { id, method, params } = parsed as { id?: unknown; method?: unknown; params?: unknown };
  if (typeof method !== 'string' || !NAMES.has(method)) return undefined;
  return { id: id ?? null, method: method as ControlMethod, params: Array.isArray(params) ? params : [], body };
}

export function isMiningCall(call: ControlCall): boolean {
  return (MINING_CALLS as readonly string[]).includes(call.method);
}

export function resultBody(id: unknown, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result });
}

export function errorBody(id: unknown, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
}
