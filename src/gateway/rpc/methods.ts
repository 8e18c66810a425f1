/**
 * The standard execution-API methods, as data. Source: ethereum/execution-apis `src/eth/*.yaml` at commit
 * 033ca6e69da0 (2026-08), plus `net_*`/`web3_*` (SPEC §2) and the uncle methods of the original
 * Ethereum JSON-RPC spec, which execution clients still serve. Updating the list is a data change here.
 *
 * `blockParams` names the position of each block parameter (checked before any upstream call):
 *   tag      — block number quantity or tag (latest earliest pending safe finalized)
 *   tagOrHash — the same, or a 32-byte block hash, or an EIP-1898 object {blockHash|blockNumber}
 * `required` marks params that must be present; an absent optional block param is left to the origin.
 */
export type BlockParamKind = 'tag' | 'tagOrHash';

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
}

const tag = (index: number, required = true): BlockParam => ({ index, kind: 'tag', required });
const tagOrHash = (index: number, required = true): BlockParam => ({ index, kind: 'tagOrHash', required });

export const STANDARD_METHODS: Readonly<Record<string, MethodSpec>> = {
  // src/eth/block.yaml
  eth_getBlockByHash: { arity: [2, 2] },
  eth_getBlockByNumber: { blockParams: [tag(0)], arity: [2, 2] },
  eth_getBlockTransactionCountByHash: {},
  eth_getBlockTransactionCountByNumber: { blockParams: [tag(0, false)] },
  eth_getBlockReceipts: { blockParams: [tagOrHash(0)] },
  eth_getBlockAccessList: { blockParams: [tagOrHash(0)] },
  // src/eth/capabilities.yaml, client.yaml
  eth_capabilities: {},
  eth_chainId: {},
  eth_syncing: {},
  eth_coinbase: {},
  eth_accounts: {},
  eth_blockNumber: {},
  eth_config: {},
  // src/eth/execute.yaml
  eth_call: { blockParams: [tagOrHash(1, false)] },
  eth_estimateGas: { blockParams: [tag(1, false)] },
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
  eth_newFilter: { filterParam: true },
  eth_newBlockFilter: {},
  eth_newPendingTransactionFilter: {},
  eth_uninstallFilter: {},
  eth_getFilterChanges: {},
  eth_getFilterLogs: {},
  eth_getLogs: { filterParam: true },
  // src/eth/sign.yaml
  eth_sign: {},
  eth_signTransaction: {},
  // src/eth/state.yaml
  eth_getBalance: { blockParams: [tagOrHash(1, false)] },
  eth_getStorageAt: { blockParams: [tagOrHash(2, false)] },
  eth_getStorageValues: { blockParams: [tagOrHash(1, false)] },
  eth_getTransactionCount: { blockParams: [tagOrHash(1, false)] },
  eth_getCode: { blockParams: [tagOrHash(1, false)] },
  eth_getProof: { blockParams: [tagOrHash(2, false)] },
  // src/eth/submit.yaml
  eth_sendTransaction: { write: true },
  eth_sendRawTransaction: { write: true },
  // src/eth/transaction.yaml
  eth_getTransactionByHash: {},
  eth_getTransactionByBlockHashAndIndex: {},
  eth_getTransactionByBlockNumberAndIndex: { blockParams: [tag(0)] },
  eth_getTransactionReceipt: {},
  // Original Ethereum JSON-RPC spec, still served by execution clients.
  eth_getUncleByBlockHashAndIndex: {},
  eth_getUncleByBlockNumberAndIndex: { blockParams: [tag(0)] },
  eth_getUncleCountByBlockHash: {},
  eth_getUncleCountByBlockNumber: { blockParams: [tag(0)] },
  eth_protocolVersion: {},
  // net_ and web3_ (SPEC §2)
  net_version: {},
  net_listening: {},
  net_peerCount: {},
  web3_clientVersion: {},
  web3_sha3: {},
};

/** Namespaces refused unless a network's `allow_methods` lets them through. */
export const REFUSED_NAMESPACES = ['admin_', 'debug_', 'personal_', 'miner_', 'txpool_', 'engine_'] as const;

/** Methods that need a persistent connection; Switchyard serves HTTP only. */
export const SUBSCRIPTION_METHODS = ['eth_subscribe', 'eth_unsubscribe'] as const;

export const BLOCK_TAGS = ['latest', 'earliest', 'pending', 'safe', 'finalized'] as const;
