/**
 * The standard execution-API methods, as data. Source: ethereum/execution-apis `src/eth/*.yaml` at commit
 * 033ca6e69da0 (2026-08), plus `net_*`/`web3_*` (SPEC §2) and the uncle methods of the original
 * Ethereum JSON-RPC spec, which execution clients still serve. Updating the list is a data change here.
 *
 * `blockParams` names the position of each block parameter (checked before any upstream call):
 *   tag      — block number quantity or tag (latest earliest pending safe finalized)
 *   tagOrHash — the same, or a 32-byte block hash, or an EIP-1898 object {blockHash|blockNumber}
 * `required` marks params that must be present; an absent optional block param is left to the origin.
 *
 * `chain` says what a call needs from an origin's chain when its block parameters do not say it
 * (call-needs.ts): `none` — nothing (chain id, client version, hashing); `hash` — a lookup by hash. Methods
 * without it are head-relative unless a block parameter pins them. `readYourWrites` marks the pending-state
 * reads that follow a client's own transaction to the origin that took it (SPEC §9): `always`, or only at
 * the `pending` tag.
 *
 * This is the one method table: the method policy (method-policy.ts), the params checks (params.ts), the
 * batch rules (handler.ts), filter affinity (upstream/filter-affinity.ts), the write rule
 * (upstream/origin-forwarder.ts), chain-aware routing (call-needs.ts), the response cache
 * (upstream/cache/cacheability.ts) and answer verification (upstream/verified/) all read it; none keeps a
 * method list of its own.
 */
export type BlockParamKind = 'tag' | 'tagOrHash';

/**
 * How the response cache may keep an answer (upstream/cache/cacheability.ts has the rules):
 *   static       — [] params; a network's identity never changes;
 *   block-hash   — [hash, fullTx]: a hash names one block's content;
 *   tx-hash      — [hash]: kept only once the transaction's block is final;
 *   block-number — [quantity, fullTx]: only at or below the finalized height.
 */
export type CacheKind = 'static' | 'block-hash' | 'tx-hash' | 'block-number';

/**
 * A method's part in filter affinity (upstream/filter-affinity.ts): it creates a filter (the answer's
 * result is the filter id), uses one (params[0] names it), or uninstalls one (uses it, then forgets it).
 * Filter calls never join an upstream batch: they follow their filter's origin.
 */
export type FilterRole = 'create' | 'use' | 'uninstall';

/**
 * How an answer is verified (SPEC §18, upstream/verified/): `block` — the header hash (and the
 * transactions) against the trusted hash; `receipt`, `block-receipts` — against the block's receipts
 * root; `logs` — block hashes on the trusted chain (with `proofs` also the receipts roots); `account`,
 * `storage`, `code`, `proof` — an eth_getProof verified against the trusted stateRoot; `call`,
 * `estimate` — executed locally over proven state. Absent: forwarded unverified.
 */
export type VerifyKind =
  | 'block'
  | 'receipt'
  | 'block-receipts'
  | 'logs'
  | 'account'
  | 'storage'
  | 'code'
  | 'proof'
  | 'call'
  | 'estimate';

/** What a call needs from an origin's chain when its block parameters do not say (call-needs.ts). */
export type ChainKind = 'none' | 'hash';

export interface BlockParam {
  index: number;
  kind: BlockParamKind;
  required: boolean;
}

export interface MethodSpec {
  /** Retried on another origin only when it surely never reached the first (SPEC §2). */
  write?: true;
  blockParams?: readonly BlockParam[];
  /** eth_getLogs / eth_newFilter: params[0] is a filter object with fromBlock/toBlock/blockHash. */
  filterParam?: true;
  /** eth_getBlockByNumber and friends: exact positional arity [min, max]. */
  arity?: readonly [number, number];
  /** Filter affinity: creates, uses or uninstalls a filter (FilterRole). */
  filter?: FilterRole;
  /** Response cache: how an answer may be kept (CacheKind); absent: never cached. */
  cache?: CacheKind;
  /** Chain-aware routing: `none` or a lookup by `hash`; absent: head-relative unless a block param pins it. */
  chain?: ChainKind;
  /** Read-your-writes: goes first to the origin that took the client's last transaction. */
  readYourWrites?: 'always' | 'pending';
  /** Answer verification (VerifyKind); absent: never verified. */
  verify?: VerifyKind;
}

const tag = (index: number, required = true): BlockParam => ({ index, kind: 'tag', required });
const tagOrHash = (index: number, required = true): BlockParam => ({ index, kind: 'tagOrHash', required });

export const STANDARD_METHODS: Readonly<Record<string, MethodSpec>> = {
  // src/eth/block.yaml
  eth_getBlockByHash: { arity: [2, 2], cache: 'block-hash', chain: 'hash', verify: 'block' },
  eth_getBlockByNumber: { blockParams: [tag(0)], arity: [2, 2], cache: 'block-number', verify: 'block' },
  eth_getBlockTransactionCountByHash: { chain: 'hash' },
  eth_getBlockTransactionCountByNumber: { blockParams: [tag(0, false)] },
  eth_getBlockReceipts: { blockParams: [tagOrHash(0)], verify: 'block-receipts' },
  eth_getBlockAccessList: { blockParams: [tagOrHash(0)] },
  // src/eth/capabilities.yaml, client.yaml
  eth_capabilities: { chain: 'none' },
  eth_chainId: { cache: 'static', chain: 'none' },
  eth_syncing: {},
  eth_coinbase: { chain: 'none' },
  eth_accounts: { chain: 'none' },
  eth_blockNumber: {},
  eth_config: { chain: 'none' },
  // src/eth/execute.yaml
  eth_call: { blockParams: [tagOrHash(1, false)], readYourWrites: 'pending', verify: 'call' },
  eth_estimateGas: { blockParams: [tag(1, false)], readYourWrites: 'pending', verify: 'estimate' },
  eth_createAccessList: { blockParams: [tag(1, false)] },
  eth_simulateV1: { blockParams: [tagOrHash(1, false)] },
  // src/eth/fee_market.yaml
  eth_gasPrice: {},
  eth_baseFee: {},
  eth_blobBaseFee: {},
  eth_maxPriorityFeePerGas: {},
  eth_feeHistory: { blockParams: [tag(1)] },
  // src/eth/fill.yaml
  eth_fillTransaction: {},
  // src/eth/filter.yaml
  eth_newFilter: { filterParam: true, filter: 'create' },
  eth_newBlockFilter: { filter: 'create' },
  eth_newPendingTransactionFilter: { filter: 'create' },
  eth_uninstallFilter: { filter: 'uninstall' },
  eth_getFilterChanges: { filter: 'use' },
  eth_getFilterLogs: { filter: 'use' },
  eth_getLogs: { filterParam: true, verify: 'logs' },
  // src/eth/sign.yaml
  eth_sign: { chain: 'none' },
  eth_signTransaction: { chain: 'none' },
  // src/eth/state.yaml
  eth_getBalance: { blockParams: [tagOrHash(1, false)], verify: 'account' },
  eth_getStorageAt: { blockParams: [tagOrHash(2, false)], verify: 'storage' },
  eth_getStorageValues: { blockParams: [tagOrHash(1, false)] },
  eth_getTransactionCount: { blockParams: [tagOrHash(1, false)], readYourWrites: 'pending', verify: 'account' },
  eth_getCode: { blockParams: [tagOrHash(1, false)], verify: 'code' },
  eth_getProof: { blockParams: [tagOrHash(2, false)], verify: 'proof' },
  // src/eth/submit.yaml
  eth_sendTransaction: { write: true, chain: 'none' },
  eth_sendRawTransaction: { write: true, chain: 'none' },
  // src/eth/transaction.yaml
  eth_getTransactionByHash: { cache: 'tx-hash', chain: 'hash', readYourWrites: 'always' },
  eth_getTransactionByBlockHashAndIndex: { chain: 'hash' },
  eth_getTransactionByBlockNumberAndIndex: { blockParams: [tag(0)] },
  eth_getTransactionReceipt: { cache: 'tx-hash', chain: 'hash', readYourWrites: 'always', verify: 'receipt' },
  // Original Ethereum JSON-RPC spec, still served by execution clients.
  eth_getUncleByBlockHashAndIndex: { chain: 'hash' },
  eth_getUncleByBlockNumberAndIndex: { blockParams: [tag(0)] },
  eth_getUncleCountByBlockHash: { chain: 'hash' },
  eth_getUncleCountByBlockNumber: { blockParams: [tag(0)] },
  eth_protocolVersion: { chain: 'none' },
  // net_ and web3_ (SPEC §2)
  net_version: { cache: 'static', chain: 'none' },
  net_listening: { chain: 'none' },
  net_peerCount: { chain: 'none' },
  web3_clientVersion: { chain: 'none' },
  web3_sha3: { chain: 'none' },
};

/** Namespaces refused unless a network's `allow_methods` lets them through. */
export const REFUSED_NAMESPACES = ['admin_', 'debug_', 'personal_', 'miner_', 'txpool_', 'engine_'] as const;

/** Methods that need a persistent connection; Switchyard serves HTTP only. */
export const SUBSCRIPTION_METHODS = ['eth_subscribe', 'eth_unsubscribe'] as const;

export const BLOCK_TAGS = ['latest', 'earliest', 'pending', 'safe', 'finalized'] as const;

/**
 * The `method` label of `switchyard_rpc_requests_total`: a name of this table (or eth_subscribe /
 * eth_unsubscribe), else `other`, so the label set stays bounded whatever names clients send.
 */
export function methodLabel(method: string): string {
  return Object.hasOwn(STANDARD_METHODS, method) || (SUBSCRIPTION_METHODS as readonly string[]).includes(method)
    ? method
    : 'other';
}
