/**
 * Parameter checks done before any upstream call (SPEC §2), for eth_getBlockByNumber and every method
 * with a block parameter (methods.ts says where):
 *   - block number: a 0x-prefixed hex quantity without leading zeros (0x0, 0x1a; not 0x, 0x01, 1a);
 *     hex digits may be either case;
 *   - tag: latest earliest pending safe finalized;
 *   - where the standard allows a hash: 0x + 64 hex digits, or an EIP-1898 object
 *     {blockHash, requireCanonical?} / {blockNumber};
 *   - eth_getBlockByNumber: exactly [block, fullTransactions: boolean];
 *   - eth_getLogs / eth_newFilter: fromBlock/toBlock as above, blockHash a hash, not both forms; and,
 *     given `limits`, the filter's size (log-filter-limits.ts).
 * Checked methods take positional params (an array). Other methods' params go to the origin unchecked.
 */
import { SwitchyardError } from '../../errors/base.js';
import { filterTooLarge, type LogFilterLimits } from './log-filter-limits.js';
import { BLOCK_TAGS, type BlockParamKind, STANDARD_METHODS } from './methods.js';

const QUANTITY = /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;
const TAG_LIST = BLOCK_TAGS.join(', ');

function invalidParams(method: string, message: string): SwitchyardError {
  return new SwitchyardError('RPC_INVALID_PARAMS', `Invalid params for ${method}: ${message}`, { details: { method } });
}

export function checkParams(method: string, params: unknown, limits?: LogFilterLimits): SwitchyardError | undefined {
  const spec = STANDARD_METHODS[method];
  if (
    spec === undefined ||
    (spec.blockParams === undefined && spec.filterParam === undefined && spec.arity === undefined)
  ) {
    return undefined;
  }
  if (params === undefined && spec.arity === undefined && !spec.blockParams?.some((p) => p.required)) return undefined;
  if (!Array.isArray(params)) return invalidParams(method, 'params must be an array (positional parameters).');
  if (spec.arity !== undefined) {
    const [min, max] = spec.arity;
    if (params.length < min || params.length > max) {
      return invalidParams(method, `expected ${min === max ? min : `${min} to ${max}`} params, got ${params.length}.`);
    }
  }
  for (const block of spec.blockParams ?? []) {
    const value: unknown = params[block.index];
    if (value === undefined) {
      if (block.required)
        return invalidParams(
          method,
          `param ${block.index + 1} (block) is missing; use a block number like "0x1a" or a tag (${TAG_LIST}).`,
        );
      continue;
    }
    const problem = blockProblem(value, block.kind);
    if (problem !== undefined) return invalidParams(method, `param ${block.index + 1} (block): ${problem}`);
  }
  if (method === 'eth_getBlockByNumber' && typeof params[1] !== 'boolean') {
    return invalidParams(method, 'param 2 (full transactions) must be true or false.');
  }
  if (spec.filterParam) {
    const problem = filterProblem(params[0]);
    if (problem !== undefined) return invalidParams(method, `param 1 (filter): ${problem}`);
    if (limits !== undefined) return filterTooLarge(method, params[0] as Record<string, unknown>, limits);
  }
  return undefined;
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function blockProblem(value: unknown, kind: BlockParamKind): string | undefined {
  if (typeof value === 'string') {
    if ((BLOCK_TAGS as readonly string[]).includes(value) || QUANTITY.test(value)) return undefined;
    if (kind === 'tagOrHash' && HASH.test(value)) return undefined;
    const hint = /^0x0[0-9a-fA-F]/.test(value)
      ? ' (no leading zeros: write 0x1, not 0x01)'
      : /^[0-9a-fA-F]+$/.test(value)
        ? ' (a block number needs the 0x prefix)'
        : '';
    return `${describe(value)} is not a block number or tag${hint}; use a hex quantity like "0x1a" or one of ${TAG_LIST}${kind === 'tagOrHash' ? ', or a 32-byte block hash' : ''}.`;
  }
  if (kind === 'tagOrHash' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj);
    if (typeof obj.blockHash === 'string' && HASH.test(obj.blockHash)) {
      const extra = keys.filter((k) => k !== 'blockHash' && k !== 'requireCanonical');
      if (extra.length === 0 && (obj.requireCanonical === undefined || typeof obj.requireCanonical === 'boolean')) {
        return undefined;
      }
    } else if (typeof obj.blockNumber === 'string' && QUANTITY.test(obj.blockNumber) && keys.length === 1) {
      return undefined;
    }
    return `${describe(value)} is not a valid EIP-1898 block object; use {"blockHash":"0x…64 hex"} or {"blockNumber":"0x1a"}.`;
  }
  return `${describe(value)} is not a block number or tag; use a hex string like "0x1a" or one of ${TAG_LIST}.`;
}

function filterProblem(filter: unknown): string | undefined {
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) {
    return 'must be an object such as {"fromBlock":"0x1","toBlock":"latest","address":"0x…"}.';
  }
  const obj = filter as Record<string, unknown>;
  for (const key of ['fromBlock', 'toBlock'] as const) {
    if (obj[key] === undefined) continue;
    const problem = blockProblem(obj[key], 'tag');
    if (problem !== undefined) return `${key}: ${problem}`;
  }
  if (obj.blockHash !== undefined) {
    if (typeof obj.blockHash !== 'string' || !HASH.test(obj.blockHash)) {
      return `blockHash ${describe(obj.blockHash)} must be 0x followed by 64 hex digits.`;
    }
    if (obj.fromBlock !== undefined || obj.toBlock !== undefined) {
      return 'give either blockHash or fromBlock/toBlock, not both.';
    }
  }
  return undefined;
}
