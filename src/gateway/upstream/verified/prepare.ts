/**
 * A verified call before any origin is asked (SPEC §18): which check it takes and what that proves in the
 * call's mode (`levelOf`), and the block it is checked at with its params pinned to that block
 * (`prepareCall`; block-target.ts resolves tags to trusted blocks).
 *
 * Levels: block answers and receipts prove hashes and roots (`integrity`) in either mode; logs prove
 * `integrity` with `integrity` and `proof` with `proofs` (receipts roots); state reads, eth_getProof and
 * local execution are checked only with `proofs` (`proof`) — with `integrity` they are forwarded as before.
 *
 * Pinned params: a block parameter that is a tag or number becomes the trusted block's number (a hash
 * stays); a call without one (eth_call's is optional) gets it. eth_getLogs: `fromBlock` and `toBlock`
 * (absent: `latest`; `pending`: the trusted tip too) become numbers; a `blockHash` filter stays.
 * Lookups by hash (eth_getBlockByHash, eth_getTransactionReceipt) keep their params. A call whose element
 * has members beyond the four of JSON-RPC, or whose params are not a list, is not verified (its bytes may
 * say more than its method and params).
 */
import type { VerifyLevel, VerifyMode } from '../../rpc/forwarder.js';
import { STANDARD_METHODS, type VerifyKind } from '../../rpc/methods.js';
import type { RpcCall } from '../../rpc/request.js';
import { type BlockTarget, resolveBlock, type TargetChain, targetParam } from './block-target.js';

const INTEGRITY_KINDS: ReadonlySet<VerifyKind> = new Set(['block', 'receipt', 'block-receipts', 'logs']);
const HASH = /^0x[0-9a-fA-F]{64}$/;

/** What a passed check of `kind` proves under `mode`; undefined: not verified in this mode. */
export function levelOf(kind: VerifyKind | undefined, mode: VerifyMode): VerifyLevel | undefined {
  if (kind === undefined || mode === 'off') return undefined;
  if (kind === 'logs') return mode === 'proofs' ? 'proof' : 'integrity';
  if (INTEGRITY_KINDS.has(kind)) return 'integrity';
  return mode === 'proofs' ? 'proof' : undefined;
}

export type PreparedCall =
  | { readonly kind: 'checked'; readonly target: BlockTarget | undefined; readonly params: readonly unknown[] }
  | { readonly kind: 'unprovable' }
  | { readonly kind: 'unanchored'; readonly asked: string };

const UNPROVABLE: PreparedCall = { kind: 'unprovable' };

export async function prepareCall(
  chain: TargetChain,
  network: string,
  call: RpcCall,
  kind: VerifyKind,
): Promise<PreparedCall> {
  if (call.extraMembers || !Array.isArray(call.params)) return UNPROVABLE;
  const params: readonly unknown[] = call.params;
  if (kind === 'receipt') return { kind: 'checked', target: undefined, params };
  if (call.method === 'eth_getBlockByHash') {
    return typeof params[0] === 'string' && HASH.test(params[0])
      ? { kind: 'checked', target: undefined, params }
      : UNPROVABLE;
  }
  if (kind === 'logs') return prepareLogs(chain, network, params);
  const index = STANDARD_METHODS[call.method]?.blockParams?.[0]?.index;
  if (index === undefined) return UNPROVABLE;
  const resolved = await resolveBlock(chain, network, params[index]);
  if (resolved.kind === 'unprovable' || resolved.kind === 'unanchored') return resolved;
  const pinned = [...params];
  while (pinned.length < index) pinned.push(undefined);
  if (resolved.kind === 'trusted') pinned[index] = targetParam(resolved);
  else pinned[index] = params[index];
  return { kind: 'checked', target: resolved, params: pinned };
}

async function prepareLogs(chain: TargetChain, network: string, params: readonly unknown[]): Promise<PreparedCall> {
  const filter = params[0];
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) return UNPROVABLE;
  const { blockHash, fromBlock, toBlock } = filter as { blockHash?: unknown; fromBlock?: unknown; toBlock?: unknown };
  if (blockHash !== undefined) {
    return typeof blockHash === 'string' && HASH.test(blockHash)
      ? { kind: 'checked', target: { kind: 'hash', hash: blockHash.toLowerCase() }, params }
      : UNPROVABLE;
  }
  const pinned: Record<string, unknown> = { ...filter };
  for (const [key, tag] of [
    ['fromBlock', fromBlock],
    ['toBlock', toBlock],
  ] as const) {
    const resolved = await resolveBlock(chain, network, tag === 'pending' ? 'latest' : tag);
    if (resolved.kind === 'unanchored') return resolved;
    if (resolved.kind !== 'trusted') return UNPROVABLE;
    pinned[key] = targetParam(resolved);
  }
  return { kind: 'checked', target: undefined, params: [pinned, ...params.slice(1)] };
}
