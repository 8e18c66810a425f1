/**
 * Missing-data answers (SPEC §9): the errors an origin gives when it lacks the data a read asks for. One
 * documented table of the messages geth, erigon, nethermind, besu, reth and anvil give, and one matcher.
 * Pure data, no imports. Meanings (routing/ and the forwarder act on them; this file only names them):
 *   state         — the origin pruned the state at that block: retry the read on the next origin; the
 *                   tracker learns the origin's earliest block;
 *   history       — the origin expired that block's body, receipts or logs (EIP-4444): same as state;
 *   unknown-block — the origin lacks the block (behind, syncing, or a hash it never saw): retry the read
 *                   on the next origin; nothing is learned about its earliest block.
 *
 * Matching (first matching row wins, so specific rows come before generic ones): a row's `message` is
 * tested case-insensitively; generic phrases ("block not found", "unknown block", …) are anchored to the
 * whole message, and where even that says too little the code must match too (`codeRequired`; elsewhere
 * `codes` is documentation, since proxies re-wrap codes more often than text). Never a match: code 3 or a
 * message starting "execution reverted" (a revert reason can say anything), or an error with neither code
 * nor message. Only the first 1024 characters of a message are read. `source` is where the client builds
 * the message (repository and path); `example` is a message exactly as the client sends it.
 */

export type MissingDataMeaning = 'state' | 'history' | 'unknown-block';

export type MissingDataClient = 'geth' | 'erigon' | 'nethermind' | 'besu' | 'reth' | 'anvil';

/** Numbers a message may carry: the block asked for, the origin's head, its earliest available block. */
export interface MissingDataNumbers {
  readonly requested?: number;
  readonly head?: number;
  readonly earliestAvailable?: number;
}

export interface MissingDataRow {
  readonly id: string;
  readonly clients: readonly MissingDataClient[];
  /** Absent: the row matches on the code alone. */
  readonly message?: RegExp;
  readonly codes: readonly number[];
  readonly codeRequired?: boolean;
  /** Fixed, or decided from the message. */
  readonly meaning: MissingDataMeaning | ((numbers: MissingDataNumbers, message: string) => MissingDataMeaning);
  /** Patterns with named groups `requested`, `head`, `earliest` (decimal). */
  readonly numbers?: readonly RegExp[];
  readonly source: string;
  readonly example: string;
}

export interface MissingDataMatch extends MissingDataNumbers {
  /** The row's id. */
  readonly row: string;
  readonly meaning: MissingDataMeaning;
  readonly clients: readonly MissingDataClient[];
}

const HASH = '(?:0x)?[0-9a-f]{64}';
const ROOT = 'b1d2ee2d5d0c1e6c18a4a3a0f4bf6e1e5a9d2f3c4b5a69788796a5b4c3d2e1f0';

/** Erigon's newer pruning gates name what is still there: blocks and receipts are history, the rest state. */
const erigonPrunedMeaning = (_: MissingDataNumbers, message: string): MissingDataMeaning =>
  /\b(?:blocks|receipts) are available from block\b/i.test(message) ? 'history' : 'state';

/** Anvil gives one error for a block above its head (not there yet) and one whose state it dropped. */
const anvilOutOfRangeMeaning = ({ requested, head }: MissingDataNumbers): MissingDataMeaning =>
  requested !== undefined && head !== undefined && requested > head ? 'unknown-block' : 'state';

export const MISSING_DATA_TABLE: readonly MissingDataRow[] = [
  // ── Pruned state ──────────────────────────────────────────────────────────────────────────────
  {
    id: 'missing-trie-node',
    clients: ['geth'],
    message: /missing trie node/i,
    codes: [-32000],
    meaning: 'state',
    source: 'ethereum/go-ethereum trie/errors.go (MissingNodeError); geth forks (bsc, bor) keep it',
    example: `missing trie node ${ROOT} (path ) <nil>`,
  },
  {
    id: 'historical-state-unavailable',
    clients: ['geth'],
    message: /historical state\b.*\bnot available/i,
    codes: [-32000],
    meaning: 'state',
    source:
      'ethereum/go-ethereum core/state/database_history.go (v1.16+, every state read below the retained window);' +
      ' eth/state_accessor.go ("… in path scheme yet", ≤ v1.14, tracing)',
    example: `historical state ${ROOT} is not available`,
  },
  {
    id: 'state-root-unavailable',
    clients: ['geth'],
    message: new RegExp(`^state ${HASH} is not available`, 'i'),
    codes: [-32000],
    meaning: 'state',
    source: 'ethereum/go-ethereum triedb/pathdb/reader.go (v1.14–v1.15), triedb/hashdb/database.go (", not found")',
    example: `state 0x${ROOT} is not available`,
  },
  {
    id: 'required-historical-state',
    clients: ['geth'],
    message: /required historical state unavailable/i,
    codes: [-32000],
    meaning: 'state',
    source: 'ethereum/go-ethereum eth/state_accessor.go (debug_trace* on a hash-scheme node)',
    example: 'required historical state unavailable (reexec=128)',
  },
  {
    id: 'erigon-pruned',
    clients: ['erigon'],
    message: /old data not available due to pruning/i,
    codes: [-32000],
    meaning: erigonPrunedMeaning,
    numbers: [
      /requested block (?<requested>\d+)/i,
      /(?:is|are) available from block (?<earliest>\d+)/i,
      /last state history bn: (?<earliest>\d+)/i,
    ],
    source:
      'erigontech/erigon core/state/history_reader_v3.go, later execution/state/history_reader_v3.go (PrunedError),' +
      ' returned by rpc/rpchelper/helper.go; rpc/jsonrpc/eth_api.go (checkPruneField) adds ": requested block N, …"',
    example: 'old data not available due to pruning',
  },
  {
    id: 'erigon-history-pruned',
    clients: ['erigon'],
    message: /history has been pruned for this block/i,
    codes: [-32000],
    meaning: 'state',
    source: 'erigontech/erigon rpc/jsonrpc/eth_api.go (checkPruneHistory, 3.0.x; guards eth_getBalance and friends)',
    example: 'history has been pruned for this block',
  },
  {
    id: 'reth-state-pruned',
    clients: ['reth'],
    message: /state at block #\d+ is pruned/i,
    codes: [-32603],
    meaning: 'state',
    numbers: [/state at block #(?<requested>\d+)/i],
    source: 'paradigmxyz/reth crates/storage/errors/src/provider.rs (ProviderError::StateAtBlockPruned)',
    example: 'state at block #17000000 is pruned',
  },
  {
    id: 'nethermind-no-state',
    clients: ['nethermind'],
    message: /no state available for block/i,
    codes: [-32002],
    meaning: 'state',
    numbers: [/for block (?<requested>\d+) \(/i],
    source:
      'NethermindEth/nethermind src/Nethermind/Nethermind.JsonRpc/Modules/Eth/EthRpcModule.cs (GetStateFailureResult)',
    example: `No state available for block 17000000 (0x${ROOT})`,
  },
  {
    id: 'besu-world-state-unavailable',
    clients: ['besu'],
    message: /^world state unavailable$/i,
    codes: [-32000],
    meaning: 'state',
    source: 'hyperledger/besu ethereum/api/…/jsonrpc/internal/response/RpcErrorType.java (WORLD_STATE_UNAVAILABLE)',
    example: 'World state unavailable',
  },
  {
    id: 'anvil-block-out-of-range',
    clients: ['anvil'],
    message: /^BlockOutOfRangeError: block height is \d+ but requested was \d+/i,
    codes: [-32602],
    meaning: anvilOutOfRangeMeaning,
    numbers: [/block height is (?<head>\d+) but requested was (?<requested>\d+)/i],
    source:
      'foundry-rs/foundry crates/anvil/src/eth/error/mod.rs (BlockOutOfRange), backend/mem/mod.rs (with_database_at)',
    example: 'BlockOutOfRangeError: block height is 16 but requested was 2',
  },
  // ── Expired history (EIP-4444) ────────────────────────────────────────────────────────────────
  {
    id: 'pruned-history-unavailable',
    clients: ['geth', 'reth', 'besu', 'nethermind'],
    message: /pruned history unavailable/i,
    codes: [4444],
    meaning: 'history',
    numbers: [/requested (?<requested>\d+), earliest available (?<earliest>\d+)/i, /for block (?<requested>\d+)$/i],
    source:
      'ethereum/go-ethereum core/history/historymode.go; paradigmxyz/reth crates/rpc/rpc-eth-types/src/error/mod.rs;' +
      ' hyperledger/besu RpcErrorType.java (PRUNED_HISTORY_UNAVAILABLE);' +
      ' NethermindEth/nethermind Nethermind.JsonRpc/ErrorMessages.cs, Modules/BlockFinderExtensions.cs',
    example: 'pruned history unavailable: requested 5, earliest available 100',
  },
  {
    id: 'reth-block-expired',
    clients: ['reth'],
    message: /block #\d+ is not available, history has expired/i,
    codes: [-32603],
    meaning: 'history',
    numbers: [/block #(?<requested>\d+)/i, /earliest available: #(?<earliest>\d+)/i],
    source: 'paradigmxyz/reth crates/storage/errors/src/provider.rs (ProviderError::BlockExpired)',
    example: 'block #5 is not available, history has expired (earliest available: #100)',
  },
  // ── Not there yet (behind, syncing, or a block it never saw) ──────────────────────────────────
  {
    id: 'header-not-found',
    clients: ['geth', 'nethermind'],
    message: /^(?:finalized |safe )?header (?:for hash )?not found$/i,
    codes: [-32000, -32001],
    meaning: 'unknown-block',
    source:
      'ethereum/go-ethereum eth/api_backend.go, eth/filters/filter.go;' +
      ' NethermindEth/nethermind Nethermind.JsonRpc/Modules/BlockFinderExtensions.cs (HeaderNotFound)',
    example: 'header not found',
  },
  {
    id: 'unknown-block',
    clients: ['geth', 'besu', 'nethermind', 'reth', 'anvil'],
    message: /^unknown block(?: number| error)?$/i,
    codes: [-32000, -32001, -39001],
    meaning: 'unknown-block',
    source:
      'ethereum/go-ethereum eth/filters/api.go (errUnknownBlock); hyperledger/besu RpcErrorType.java (UNKNOWN_BLOCK);' +
      ' NethermindEth/nethermind BlockFinderExtensions.cs ("Unknown block error"); paradigmxyz/reth ≤ v0.2' +
      ' crates/rpc/rpc/src/eth/error.rs ("unknown block number", -32001); foundry-rs/foundry' +
      ' crates/anvil/src/eth/error/mod.rs (UnknownBlock)',
    example: 'unknown block',
  },
  {
    id: 'reth-block-not-found',
    clients: ['reth'],
    message: /^block not found: \S/i,
    codes: [-32001],
    meaning: 'unknown-block',
    source: 'paradigmxyz/reth crates/rpc/rpc-eth-types/src/error/mod.rs (HeaderNotFound, ReceiptsNotFound; v1.3+)',
    example: 'block not found: 0x186a0',
  },
  {
    id: 'block-not-found',
    clients: ['besu', 'erigon', 'geth'],
    message: /^(?:finalized |safe )?block not found$/i,
    codes: [-32000],
    meaning: 'unknown-block',
    source:
      'hyperledger/besu RpcErrorType.java (BLOCK_NOT_FOUND: eth_call, eth_getLogs by hash);' +
      ' erigontech/erigon rpc/jsonrpc/eth_call.go (eth_getProof); ethereum/go-ethereum eth/api_backend.go (finalized, safe)',
    example: 'Block not found',
  },
  {
    id: 'block-id-not-found',
    clients: ['erigon', 'reth'],
    message: /^block (?:0x)?[0-9a-f]+ not found$/i,
    codes: [-32000],
    meaning: 'unknown-block',
    source:
      'erigontech/erigon rpc/rpchelper/helper.go (BlockNotFoundErr, a hash without 0x);' +
      ' paradigmxyz/reth crates/rpc/rpc-eth-types/src/error/mod.rs (TracingBlockNotFound)',
    example: `block ${ROOT} not found`,
  },
  {
    id: 'nethermind-could-not-be-found',
    clients: ['nethermind'],
    message: new RegExp(`^(?:${HASH}|\\d+|latest|earliest|pending|safe|finalized) could not be found$`, 'i'),
    codes: [-32001],
    meaning: 'unknown-block',
    source:
      'NethermindEth/nethermind Nethermind.JsonRpc/Modules/BlockFinderExtensions.cs (SearchForHeader, before "header not found")',
    example: '17000000 could not be found',
  },
  {
    id: 'erigon-not-executed',
    clients: ['erigon'],
    message: /^block \d+ is not executed \(last executed: \d+\)/i,
    codes: [-32000],
    meaning: 'unknown-block',
    numbers: [/^block (?<requested>\d+) is not executed \(last executed: (?<head>\d+)\)/i],
    source: 'erigontech/erigon rpc/rpchelper/helper.go (CheckBlockExecuted)',
    example: 'block 17000001 is not executed (last executed: 17000000)',
  },
  {
    id: 'reth-not-executed',
    clients: ['reth'],
    message: /is not available, block has not been executed yet/i,
    codes: [-32603],
    meaning: 'unknown-block',
    numbers: [/state at block #(?<requested>\d+)/i, /latest executed: #(?<head>\d+)/i],
    source: 'paradigmxyz/reth crates/storage/errors/src/provider.rs (ProviderError::BlockNotExecuted)',
    example: 'state at block #101 is not available, block has not been executed yet (latest executed: #100)',
  },
  {
    id: 'erigon-proof-future',
    clients: ['erigon'],
    message: /^block number is in the future latest=\d+ requested=\d+/i,
    codes: [-32000],
    meaning: 'unknown-block',
    numbers: [/latest=(?<head>\d+) requested=(?<requested>\d+)/i],
    source: 'erigontech/erigon rpc/jsonrpc/eth_call.go (eth_getProof)',
    example: 'block number is in the future latest=100 requested=101',
  },
  {
    id: 'erigon-block-not-in-db',
    clients: ['erigon'],
    message: /^could not find the block .+ in cache or db$/i,
    codes: [-32000],
    meaning: 'unknown-block',
    source: 'erigontech/erigon rpc/jsonrpc/eth_call.go (eth_estimateGas)',
    example: 'could not find the block 0x64 in cache or db',
  },
  {
    id: 'range-beyond-head',
    clients: ['geth', 'reth'],
    message: /^(?:block range extends beyond current head block|request beyond head block)\b/i,
    codes: [-32602],
    meaning: 'unknown-block',
    numbers: [/requested (?<requested>\d+), head (?<head>\d+)/i],
    source:
      'ethereum/go-ethereum eth/filters/api.go (errBlockRangeIntoFuture); paradigmxyz/reth crates/rpc/rpc/src/eth/filter.rs' +
      ' (BlockRangeExceedsHead), crates/rpc/rpc-eth-types/src/error/mod.rs (RequestBeyondHead, eth_feeHistory)',
    example: 'block range extends beyond current head block',
  },
  {
    id: 'reth-no-state-for-hash',
    clients: ['reth'],
    message: /^no state found for block (?:number )?\S+$/i,
    codes: [-32603],
    // reth says this for a hash it cannot open state at, whatever the reason (unknown hash or pruned): the
    // number is not in the message, so nothing can be learned; it is still retried elsewhere.
    meaning: 'unknown-block',
    source: 'paradigmxyz/reth crates/storage/provider/src/providers/blockchain_provider.rs (StateForHashNotFound)',
    example: `no state found for block 0x${ROOT}`,
  },
  {
    id: 'besu-initial-sync',
    clients: ['besu'],
    message: /^initial sync is still in progress$/i,
    codes: [-32008],
    meaning: 'unknown-block',
    source: 'hyperledger/besu RpcErrorType.java (CHAIN_HEAD_WORLD_STATE_NOT_AVAILABLE)',
    example: 'Initial sync is still in progress',
  },
  {
    id: 'anvil-resource-not-found',
    clients: ['anvil'],
    message: /^resource not found$/i,
    codes: [-32001],
    codeRequired: true,
    meaning: 'unknown-block',
    source: 'foundry-rs/foundry crates/anvil/src/eth/error/mod.rs (BlockchainError::BlockNotFound, EIP-1898 code)',
    example: 'Resource not found',
  },
  {
    id: 'anvil-fee-history-block',
    clients: ['anvil'],
    message: /^could not find block number requested: /i,
    codes: [-32602],
    meaning: 'unknown-block',
    source: 'foundry-rs/foundry crates/anvil/src/eth/error/mod.rs (FeeHistoryError::BlockNotFound)',
    example: 'could not find block number requested: 0x64',
  },
  {
    // Last: the code alone, for 4444 answers whose text no row above knows (EIP-4444 reserves the code).
    id: 'eip-4444-code',
    clients: ['geth', 'reth', 'besu', 'nethermind'],
    codes: [4444],
    codeRequired: true,
    meaning: 'history',
    source: 'EIP-4444 code as used by all four (see pruned-history-unavailable)',
    example: 'Cannot return pruned historical reward data before epoch block 100.',
  },
];

/** Characters of a message the matcher reads. */
const MESSAGE_LIMIT = 1024;

/** The first value of each named group over the row's `numbers` patterns (unsafe integers dropped). */
function readNumbers(row: MissingDataRow, message: string): MissingDataNumbers {
  const found: { requested?: number; head?: number; earliestAvailable?: number } = {};
  for (const pattern of row.numbers ?? []) {
    const groups = pattern.exec(message)?.groups ?? {};
    for (const [name, key] of [
      ['requested', 'requested'],
      ['head', 'head'],
      ['earliest', 'earliestAvailable'],
    ] as const) {
      const value = Number(groups[name]);
      if (groups[name] !== undefined && Number.isSafeInteger(value)) found[key] ??= value;
    }
  }
  return found;
}

/**
 * The table row an origin's JSON-RPC error matches, with the numbers its message carries; undefined for
 * every other error (reverts, nonce and funds errors, invalid params, rate limits, unknown methods, …).
 */
export function missingData(error: { code?: number; message?: string }): MissingDataMatch | undefined {
  const code = typeof error.code === 'number' ? error.code : undefined;
  const message = typeof error.message === 'string' ? error.message.slice(0, MESSAGE_LIMIT).trim() : '';
  if (code === undefined && message === '') return undefined;
  if (code === 3 || /^execution reverted/i.test(message)) return undefined;
  for (const row of MISSING_DATA_TABLE) {
    if (row.codeRequired && (code === undefined || !row.codes.includes(code))) continue;
    if (row.message !== undefined && !row.message.test(message)) continue;
    const numbers = readNumbers(row, message);
    const meaning = typeof row.meaning === 'function' ? row.meaning(numbers, message) : row.meaning;
    return { row: row.id, meaning, clients: row.clients, ...numbers };
  }
  return undefined;
}
