/**
 * anvil's own methods a client may send to any node of a devnet with more than one node, answered for the
 * devnet as a whole instead of by that node (which would then mine a block of its own, or drift):
 *
 * | calls | what the devnet does |
 * |---|---|
 * | mining: `evm_mine`, `anvil_mine`, `hardhat_mine`, `evm_mine_detailed`, `anvil_mine_detailed` | run on the leader; every live node replays the blocks; then the leader's answer |
 * | time, fees, snapshots: `evm_increaseTime`, `evm_setNextBlockTimestamp`, `anvil_setNextBlockTimestamp`, `evm_setTime`, `anvil_setBlockTimestampInterval`, `anvil_removeBlockTimestampInterval`, `anvil_setNextBlockBaseFeePerGas`, `evm_snapshot`, `evm_revert` | the same: they shape the leader's next blocks (or take its chain back), which the others replay |
 * | mode: `evm_setAutomine`/`anvil_setAutomine` `[bool]`, `evm_setIntervalMining`/`anvil_setIntervalMining` `[seconds]`, `anvil_getAutomine`, `anvil_getIntervalMining` | the devnet's mining mode (a block per transaction, every N seconds, or on request) |
 * | state changed outside blocks: `anvil_setBalance`, `anvil_setCode`, `anvil_setNonce`, `anvil_setStorageAt`, … (`REFUSED`) | refused (-32000): a replayed block cannot carry them, so the nodes would stop being one chain; use `devnet.nodes: 1` |
 *
 * Only single requests are recognised; a batch goes to the node as it is. Bodies that name none of the
 * methods' common parts are not parsed.
 */

const LEADER_CALLS = [
  'evm_mine',
  'anvil_mine',
  'hardhat_mine',
  'evm_mine_detailed',
  'anvil_mine_detailed',
  'evm_increaseTime',
  'anvil_increaseTime',
  'evm_setNextBlockTimestamp',
  'anvil_setNextBlockTimestamp',
  'evm_setTime',
  'anvil_setTime',
  'anvil_setBlockTimestampInterval',
  'anvil_removeBlockTimestampInterval',
  'anvil_setNextBlockBaseFeePerGas',
  'hardhat_setNextBlockBaseFeePerGas',
  'evm_snapshot',
  'anvil_snapshot',
  'evm_revert',
  'anvil_revert',
] as const;

const MODE_CALLS = [
  'evm_setAutomine',
  'anvil_setAutomine',
  'evm_setIntervalMining',
  'anvil_setIntervalMining',
  'anvil_getAutomine',
  'anvil_getIntervalMining',
] as const;

/** Calls that change one node's state outside any block (or the header of its own blocks). */
export const REFUSED = [
  'anvil_setBalance',
  'anvil_addBalance',
  'anvil_setCode',
  'anvil_setNonce',
  'anvil_setStorageAt',
  'anvil_deal',
  'anvil_dealERC20',
  'anvil_setERC20Allowance',
  'anvil_impersonateAccount',
  'anvil_autoImpersonateAccount',
  'anvil_reset',
  'anvil_loadState',
  'anvil_rollback',
  'anvil_reorg',
  'anvil_setChainId',
  'anvil_setCoinbase',
  'anvil_setMinGasPrice',
  'evm_setBlockGasLimit',
  'evm_setAccountNonce',
  'evm_setAccountBalance',
  'evm_setAccountCode',
  'evm_setAccountStorageAt',
  'hardhat_setBalance',
  'hardhat_setCode',
  'hardhat_setNonce',
  'hardhat_setStorageAt',
  'hardhat_impersonateAccount',
  'hardhat_reset',
  'hardhat_setCoinbase',
] as const;

export type ControlKind = 'leader' | 'mode' | 'refused';

export interface ControlCall {
  readonly kind: ControlKind;
  readonly id: unknown;
  readonly method: string;
  readonly params: unknown[];
  /** The request as sent (leader calls are passed on as they are). */
  readonly body: Buffer;
}

const KINDS = new Map<string, ControlKind>([
  ...LEADER_CALLS.map((name) => [name, 'leader'] as const),
  ...MODE_CALLS.map((name) => [name, 'mode'] as const),
  ...REFUSED.map((name) => [name, 'refused'] as const),
]);
const PREFIXES = ['evm_', 'anvil_', 'hardhat_'];

export function controlCall(body: Buffer): ControlCall | undefined {
  if (!PREFIXES.some((prefix) => body.includes(prefix))) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const { id, method, params } = parsed as { id?: unknown; method?: unknown; params?: unknown };
  const kind = typeof method === 'string' ? KINDS.get(method) : undefined;
  if (kind === undefined) return undefined;
  return { kind, id: id ?? null, method: method as string, params: Array.isArray(params) ? params : [], body };
}

export function resultBody(id: unknown, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result });
}

export function errorBody(id: unknown, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
}
