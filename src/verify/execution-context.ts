/**
 * The block a call is executed in: the trusted header's number, timestamp, gas limit, coinbase,
 * prevRandao (mixHash) or difficulty, base fee and excess blob gas, and the chain id — and the fork whose
 * EVM rules apply.
 *
 * Fork choice (`executionFork`), unless the caller names one:
 * - a chain whose schedule ethereumjs knows (mainnet, Sepolia, Holesky, Hoodi) uses the fork active at
 *   the header's number and time, when that fork's header layout is the header's (a devnet reusing such a
 *   chain id, e.g. anvil with 11155111, does not follow the schedule and falls to the next rule);
 * - otherwise the newest fork of the header's layout: legacy → Berlin, london → London before the merge
 *   (difficulty ≠ 0) or Paris, shanghai → Shanghai, cancun → Cancun, prague → Osaka (the layout Prague,
 *   Osaka and the BPO forks share; anvil's default fork is one of them).
 * Base fee: a call that names no gas price executes with base fee 0, as geth does for eth_call and
 * eth_estimateGas (BASEFEE reads 0 then; anvil reads the block's). With a price, the block's base fee.
 */
import { type Block, createBlock } from '@ethereumjs/block';
import { type ChainConfig, Common, Hardfork, Holesky, Hoodi, Mainnet, Sepolia } from '@ethereumjs/common';
import type { CustomPrecompile, EVMMockBlockchainInterface } from '@ethereumjs/evm';
import { KZG_UNAVAILABLE } from './chain-rules.js';
import { dataBytes } from './encoding.js';
import { refute } from './failure.js';
import type { HeaderLayout, TrustedHeader } from './header.js';
import type { ProvenStateSource } from './state-source.js';

const KNOWN_SCHEDULES: readonly ChainConfig[] = [Mainnet, Sepolia, Holesky, Hoodi];

const NEWEST_OF_LAYOUT: Record<Exclude<HeaderLayout, 'london'>, Hardfork> = {
  legacy: Hardfork.Berlin,
  shanghai: Hardfork.Shanghai,
  cancun: Hardfork.Cancun,
  prague: Hardfork.Osaka,
};

/** The header layout of each fork ethereumjs knows (a fork not listed has a layout unknown here). */
function layoutOfFork(fork: string): HeaderLayout | undefined {
  const order: string[] = Object.values(Hardfork);
  const at = order.indexOf(fork);
  if (at < 0) return undefined;
  if (at < order.indexOf(Hardfork.London)) return 'legacy';
  if (at < order.indexOf(Hardfork.Shanghai)) return 'london';
  if (at < order.indexOf(Hardfork.Cancun)) return 'shanghai';
  if (at < order.indexOf(Hardfork.Prague)) return 'cancun';
  if (at < order.indexOf(Hardfork.Amsterdam)) return 'prague';
  return undefined;
}

/** The fork whose rules apply to a call in `header`'s block on chain `chainId`. */
export function executionFork(header: TrustedHeader, chainId: bigint): Hardfork {
  const schedule = KNOWN_SCHEDULES.find((chain) => BigInt(chain.chainId) === chainId);
  if (schedule !== undefined) {
    const common = new Common({ chain: schedule });
    const fork = common.getHardforkBy({ blockNumber: header.number, timestamp: header.timestamp });
    if (layoutOfFork(fork) === header.layout) return fork as Hardfork;
  }
  if (header.layout === 'london') return header.difficulty === 0n ? Hardfork.Paris : Hardfork.London;
  return NEWEST_OF_LAYOUT[header.layout];
}

/** The ethereumjs block a call runs in; `zeroBaseFee` for calls without a gas price (see above). */
export function executionBlock(header: TrustedHeader, common: Common, zeroBaseFee: boolean): Block {
  const bytes = (value: string | undefined) => (value === undefined ? undefined : dataBytes(value));
  const fork = common.hardfork();
  const layout = layoutOfFork(fork);
  if (layout !== header.layout) refute('execution', `a ${header.layout} header cannot run under ${fork} rules`);
  try {
    return createBlock(
      {
        header: {
          parentHash: dataBytes(header.parentHash),
          coinbase: dataBytes(header.miner),
          stateRoot: dataBytes(header.stateRoot),
          number: header.number,
          gasLimit: header.gasLimit,
          timestamp: header.timestamp,
          difficulty: header.difficulty,
          mixHash: dataBytes(header.mixHash),
          baseFeePerGas: header.baseFeePerGas === undefined ? undefined : zeroBaseFee ? 0n : header.baseFeePerGas,
          withdrawalsRoot: bytes(header.withdrawalsRoot),
          blobGasUsed: header.blobGasUsed,
          excessBlobGas: header.excessBlobGas,
          parentBeaconBlockRoot: bytes(header.parentBeaconBlockRoot),
          requestsHash: bytes(header.requestsHash),
        },
      },
      { common, skipConsensusFormatValidation: true },
    );
  } catch (err) {
    return refute('execution', `block ${header.number} cannot be set up: ${(err as Error).message}`);
  }
}

/** BLOCKHASH for the EVM, answered by the port (trusted hashes only). */
export function provenBlockchain(source: ProvenStateSource): EVMMockBlockchainInterface {
  const chain: EVMMockBlockchainInterface = {
    async getBlock(number: number) {
      const hash = dataBytes(await source.blockHash(BigInt(number)));
      return { hash: () => hash };
    },
    async putBlock() {},
    shallowCopy: () => chain,
  };
  return chain;
}

/** The KZG point-evaluation precompile (EIP-4844). */
const POINT_EVALUATION = '0x000000000000000000000000000000000000000a';

/**
 * Precompiles replaced for local execution: point evaluation refutes (`execution`) instead of running.
 * ethereumjs's own would catch the missing KZG and fail the call, an answer no origin gives.
 */
export function refusedPrecompiles(common: Common): CustomPrecompile[] {
  if (!common.isActivatedEIP(4844)) return [];
  return [{ address: POINT_EVALUATION, function: () => refute('execution', KZG_UNAVAILABLE) }];
}
