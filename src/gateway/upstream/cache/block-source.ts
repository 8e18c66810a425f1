/**
 * Builds the finality tracker's `BlockSource` from any way of sending one JSON-RPC request to a network
 * and getting the answer bytes back (the gateway passes its own forwarding; tests pass a node URL).
 * Asks `eth_getBlockByNumber(<"finalized" | hex height>, false)` and reads `number` and `hash`; an error
 * answer or a null result means "no such block".
 */
import type { BlockSource, FinalizedBlock } from './finality.js';

export type NetworkCall = (network: string, body: string) => Promise<Buffer | string>;

const QUANTITY = /^0x[0-9a-fA-F]+$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;

export function blockSource(call: NetworkCall): BlockSource {
  return async (network, which) => {
    const tag = which === 'finalized' ? 'finalized' : `0x${which.toString(16)}`;
    const body = `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["${tag}",false]}`;
    const raw = await call(network, body);
    const answer = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8')) as { result?: unknown };
    return blockOf(answer.result);
  };
}

function blockOf(result: unknown): FinalizedBlock | undefined {
  if (result === null || typeof result !== 'object') return undefined;
  const { number, hash } = result as { number?: unknown; hash?: unknown };
  if (typeof number !== 'string' || !QUANTITY.test(number)) return undefined;
  if (typeof hash !== 'string' || !HASH.test(hash)) return undefined;
  return { number: BigInt(number), hash: hash.toLowerCase() };
}
