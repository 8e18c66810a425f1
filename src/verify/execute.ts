/**
 * eth_call and eth_estimateGas executed locally in @ethereumjs/vm, at a trusted header, over state read
 * only through the `ProvenStateSource` port (proven-state.ts). The local result is the answer
 * (call-answer.ts for its JSON-RPC shapes).
 *
 * - The call runs as a transaction from `from` (default the zero address) through `runTx`: intrinsic gas,
 *   access-list warming, the EIP-7623 floor, value transfer and the sender's balance as the chain would.
 *   Its nonce is not checked (the state's is used, as eth_call does); the block gas limit is not either.
 * - Gas: `gas`, else the block's gas limit, capped at EIP-7825's per-transaction limit where that rule is
 *   active (Osaka); a call that needs more than the cap fails here although anvil (cap off) may answer it.
 * - Prices: without a non-zero price field the call pays nothing and runs with base fee 0 (geth's rule);
 *   with one it pays it, and the sender's proven balance must cover it, as on an origin.
 * - `accessList` (what the origin's eth_createAccessList reported) is only a hint: those accounts and
 *   slots are fetched first, in parallel, with sender, recipient and coinbase; everything else execution
 *   touches is fetched when touched. All of it is proven either way.
 * - eth_estimateGas: the lowest gas limit at which the call succeeds, by binary search (each run on the
 *   same cached proven state): the first run at the cap, then geth's optimistic guess
 *   ((used + refund + 2300) · 64/63), then halving until the bounds meet. anvil answers the same exact
 *   minimum; geth stops within 1.5 % of it, so its answer can be up to 1.5 % higher.
 * - Not provable here (refuted with check `execution`, so the gateway does not answer from it): a call
 *   from an address with code (ethereumjs applies EIP-3607, origins skip it for calls), the KZG
 *   point-evaluation precompile, BLOCKHASH of a block without a trusted hash, state/block overrides.
 * A port failure (a proof that did not verify, an origin that did not answer) propagates as thrown.
 */
import type { Block } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { createTx, type TypedTransaction, type TypedTxData } from '@ethereumjs/tx';
import { createAddressFromString, createZeroAddress, EthereumJSError } from '@ethereumjs/util';
import { createVM, type RunTxResult, runTx, type VM } from '@ethereumjs/vm';
import { failedAnswer, haltAnswer, type LocalCallAnswer, revertAnswer } from './call-answer.js';
import { chainCommon, transactionGasCap } from './chain-rules.js';
import { type Hex, quantityHex, toHex } from './encoding.js';
import { executionBlock, executionFork, provenBlockchain, refusedPrecompiles } from './execution-context.js';
import { isVerificationError, refute } from './failure.js';
import type { TrustedHeader } from './header.js';
import { ProvenStateManager, type StateRequest } from './proven-state.js';
import { callShape, type RpcCallRequest } from './rpc-shapes.js';
import type { ProvenStateSource } from './state-source.js';

export interface ExecutionContext {
  /** The block the call runs at (its state root anchors every read). */
  readonly header: TrustedHeader;
  readonly chainId: bigint;
  readonly source: ProvenStateSource;
  /** eth_createAccessList's `accessList` for this call, if the caller asked an origin (a hint). */
  readonly accessList?: readonly StateRequest[];
  /** ethereumjs fork name; default `executionFork(header, chainId)`. */
  readonly hardfork?: string;
}

/** Gas geth adds in its optimistic estimate (the call stipend). */
const CALL_STIPEND = 2300n;
const ZERO = createZeroAddress();

interface Prepared {
  readonly call: RpcCallRequest;
  readonly common: Common;
  readonly block: Block;
  readonly vm: VM;
  readonly state: ProvenStateManager;
  readonly from: Hex;
  /** Gas of a call that names none, and the most any run may use. */
  readonly cap: bigint;
  readonly priced: boolean;
}

type RunOutcome = { readonly ran: RunTxResult } | { readonly refused: LocalCallAnswer };

/** An answer decided before any execution (a malformed call object). */
interface Early {
  readonly answer: LocalCallAnswer;
}

function parseCall(request: unknown): { readonly call: RpcCallRequest } | Early {
  const parsed = callShape.safeParse(request);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      answer: { error: { code: -32602, message: `invalid call object: ${issue?.path.join('.')} ${issue?.message}` } },
    };
  }
  const call = parsed.data;
  if (call.input !== undefined && call.data !== undefined && call.input.toLowerCase() !== call.data.toLowerCase()) {
    return { answer: failedAnswer('both "data" and "input" are set and not equal') };
  }
  return { call };
}

function isPriced(call: RpcCallRequest): boolean {
  return [call.gasPrice, call.maxFeePerGas, call.maxPriorityFeePerGas].some(
    (fee) => fee !== undefined && BigInt(fee) > 0n,
  );
}

async function prepare(request: unknown, context: ExecutionContext): Promise<Prepared | Early> {
  const parsed = parseCall(request);
  if ('answer' in parsed) return parsed;
  const { call } = parsed;
  const { header, chainId, source } = context;
  const common = chainCommon(chainId, (context.hardfork ?? executionFork(header, chainId)) as never);
  const priced = isPriced(call);
  const block = executionBlock(header, common, !priced);
  const state = new ProvenStateManager(source, common);
  const vm = await createVM({
    common,
    stateManager: state,
    blockchain: provenBlockchain(source),
    evmOpts: { customPrecompiles: refusedPrecompiles(common) },
  });
  const from = (call.from ?? ZERO.toString()).toLowerCase() as Hex;
  const gasCap = transactionGasCap(common);
  const cap = gasCap !== undefined && gasCap < header.gasLimit ? gasCap : header.gasLimit;
  await state.preload([
    ...(context.accessList ?? []),
    ...(call.accessList ?? []),
    { address: from },
    { address: header.miner },
    ...(call.to === undefined ? [] : [{ address: call.to }]),
  ]);
  return { call, common, block, vm, state, from, cap, priced };
}

function transaction(prepared: Prepared, gasLimit: bigint): TypedTransaction {
  const { call, common } = prepared;
  const base = {
    gasLimit,
    to: call.to,
    value: call.value ?? '0x0',
    data: call.input ?? call.data ?? '0x',
    accessList: call.accessList ?? [],
    chainId: common.chainId(),
  };
  const fees = { maxFeePerGas: call.maxFeePerGas ?? '0x0', maxPriorityFeePerGas: call.maxPriorityFeePerGas ?? '0x0' };
  let data: TypedTxData;
  if (call.authorizationList !== undefined)
    data = { ...base, ...fees, type: 4, authorizationList: call.authorizationList };
  else if (call.blobVersionedHashes !== undefined) {
    const blob = { blobVersionedHashes: call.blobVersionedHashes, maxFeePerBlobGas: call.maxFeePerBlobGas ?? '0x0' };
    data = { ...base, ...fees, ...blob, type: 3 };
  } else if (call.maxFeePerGas !== undefined || call.maxPriorityFeePerGas !== undefined)
    data = { ...base, ...fees, type: 2 };
  else data = { ...base, type: call.accessList === undefined ? 0 : 1, gasPrice: call.gasPrice ?? '0x0' };
  const tx = createTx(data, { common, freeze: false, allowUnlimitedInitCodeSize: false });
  const sender = createAddressFromString(prepared.from);
  tx.getSenderAddress = () => sender;
  return tx;
}

/** What an origin answers when the chain refuses the call before executing it (ethereumjs's words → geth's). */
function refusal(err: Error): LocalCallAnswer {
  const message = err.message;
  if (message.includes('EIP-3607'))
    refute('execution', 'a call from an address with code cannot be executed here (EIP-3607)');
  if (message.includes("doesn't have enough funds")) return failedAnswer('insufficient funds for gas * price + value');
  if (message.includes("less than the block's baseFeePerGas"))
    return failedAnswer('max fee per gas less than block base fee');
  if (message.includes('INTRINSIC_GAS_TOO_LOW')) return failedAnswer('intrinsic gas too low');
  return failedAnswer(message.replace(/ \(vm hf=.*$/s, ''));
}

/** One run of the call with `gasLimit`, its writes dropped afterwards. */
async function run(prepared: Prepared, gasLimit: bigint): Promise<RunOutcome> {
  const { vm, block, state } = prepared;
  let tx: TypedTransaction;
  try {
    tx = transaction(prepared, gasLimit);
  } catch (err) {
    if (err instanceof EthereumJSError) return { refused: failedAnswer(err.message) };
    throw err;
  }
  await state.checkpoint();
  try {
    const ran = await runTx(vm, {
      tx,
      block,
      skipNonce: true,
      skipBlockGasLimitValidation: true,
      skipHardForkValidation: true,
    });
    return { ran };
  } catch (err) {
    if (isVerificationError(err)) throw err;
    if (err instanceof EthereumJSError) return { refused: refusal(err) };
    throw err;
  } finally {
    await state.revert();
    state.originalStorageCache.clear();
  }
}

function answerOf(ran: RunTxResult): LocalCallAnswer {
  const { exceptionError, returnValue } = ran.execResult;
  if (exceptionError === undefined) return { result: toHex(returnValue) };
  if (exceptionError.error === 'revert') return revertAnswer(returnValue);
  return haltAnswer(exceptionError.error);
}

/** eth_call executed locally: `{ result }` with the return data, or the error an origin would give. */
export async function executeCall(request: unknown, context: ExecutionContext): Promise<LocalCallAnswer> {
  const prepared = await prepare(request, context);
  if ('answer' in prepared) return prepared.answer;
  const gas = prepared.call.gas === undefined ? prepared.cap : BigInt(prepared.call.gas);
  const outcome = await run(prepared, gas > prepared.cap ? prepared.cap : gas);
  return 'refused' in outcome ? outcome.refused : answerOf(outcome.ran);
}

const succeeded = (outcome: RunOutcome) => 'ran' in outcome && outcome.ran.execResult.exceptionError === undefined;

/** The most gas the sender can pay for at the call's price (geth's cap), or undefined for unpriced calls. */
async function affordable(prepared: Prepared): Promise<bigint | LocalCallAnswer | undefined> {
  if (!prepared.priced) return undefined;
  const { call } = prepared;
  const price = BigInt(call.maxFeePerGas ?? call.gasPrice ?? '0x0');
  if (price === 0n) return undefined;
  const account = await prepared.state.getAccount(createAddressFromString(prepared.from));
  const balance = account?.balance ?? 0n;
  const value = BigInt(call.value ?? '0x0');
  if (value > balance) return failedAnswer('insufficient funds for transfer');
  return (balance - value) / price;
}

/** eth_estimateGas executed locally: `{ result }` with the lowest gas that succeeds, or the call's error. */
export async function estimateGas(request: unknown, context: ExecutionContext): Promise<LocalCallAnswer> {
  const prepared = await prepare(request, context);
  if ('answer' in prepared) return prepared.answer;
  let hi = prepared.call.gas === undefined ? prepared.cap : BigInt(prepared.call.gas);
  if (hi > prepared.cap) hi = prepared.cap;
  const allowance = await affordable(prepared);
  if (typeof allowance === 'object') return allowance;
  if (allowance !== undefined && allowance < hi) hi = allowance;
  const first = await run(prepared, hi);
  if ('refused' in first) return first.refused;
  const { exceptionError, returnValue, gasRefund } = first.ran.execResult;
  if (exceptionError?.error === 'revert') return revertAnswer(returnValue);
  if (exceptionError !== undefined) return failedAnswer(`gas required exceeds allowance (${hi})`);
  let lo = first.ran.totalGasSpent - 1n;
  const optimistic = ((first.ran.totalGasSpent + (gasRefund ?? 0n) + CALL_STIPEND) * 64n) / 63n;
  if (optimistic > lo && optimistic < hi) {
    if (succeeded(await run(prepared, optimistic))) hi = optimistic;
    else lo = optimistic;
  }
  while (hi - lo > 1n) {
    const mid = (hi + lo) / 2n;
    if (succeeded(await run(prepared, mid))) hi = mid;
    else lo = mid;
  }
  return { result: quantityHex(hi) };
}
