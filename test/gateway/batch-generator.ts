/**
 * A seeded generator of mixed JSON-RPC batches for batch-equivalence.test.ts. Every element kind the
 * gateway treats differently inside a batch (docs/gateway.md "Requests, batches and notifications",
 * "Method policy", "Parameter checks", the response cache in docs/benchmarks.md):
 *   read      valid reads that go upstream (state, calls, blocks above finality, logs, nulls, reverts);
 *   cached    eth_chainId, net_version, blocks by hash, final blocks by number, final transactions;
 *   filter    filter calls (always forwarded on their own);
 *   invalid   not an object, wrong or missing jsonrpc/method, bad params or id type, a member twice;
 *   refused   refused namespaces, denied and unknown methods (anvil_mine, evm_mine: never forwarded);
 *   params    params the gateway's checks refuse (-32602), and an eth_getLogs range over the limit;
 *   write     eth_sendRawTransaction of fresh and failing signed transactions, eth_sendTransaction.
 * Ids: small numbers and strings, duplicates within the batch, notifications (no id), and odd ids kept
 * byte for byte (30-digit numbers, 1e400, -0, fractions, long strings with escapes, null). Members come
 * in random order with random whitespace. Everything is drawn from one mulberry32 stream
 * (test/helpers/seeded-rng.ts), so a seed names the exact bytes of every batch of a run.
 *
 * Reads never use the `pending` tag, and transactions are looked up only after both nodes have them
 * (`pendingHashes`): the answers of the one-at-a-time node must not depend on the order of the calls.
 */
import { Rng } from '../helpers/seeded-rng.js';
import type { BatchChain } from './batch-chain.js';
import { longNumberId, longStringId, ODD_IDS } from './batch-ids.js';

export type Kind = 'read' | 'cached' | 'filter' | 'invalid' | 'refused' | 'params' | 'write' | 'notification';

export interface GenElement {
  readonly kind: Kind;
  /** The element's bytes inside the batch. */
  readonly text: string;
  /**
   * The body that makes the same call alone: the element itself, except an array element — alone it
   * would be a batch — which is asked as `0`, another non-object element (the same -32600 answer).
   */
  readonly alone: string;
  /** The raw id as sent (undefined: no id member). */
  readonly id: string | undefined;
  /** Index into the chain's fresh writes this element sends. */
  readonly fresh?: number;
}

export interface BatchOptions {
  size: number;
  /** May the batch hold writes (then it is forwarded call by call, docs/gateway.md)? */
  writes: boolean;
  /** Every element a notification of a read or a refused call (the batch answers 204). */
  allNotifications: boolean;
  /**
   * Every element an uncached read with a fresh plain id (a small number or a short string): the
   * batch the gateway may send upstream as the client wrote it (BatchRequest.asIs).
   */
  plainReads?: boolean;
  /** Hashes of fresh writes both nodes already took. */
  pendingHashes: readonly string[];
}

const TAGS = ['latest', 'earliest', 'safe', 'finalized'];
const UNKNOWN_HASH = `0x${'ab'.repeat(32)}`;
const STRANGER = '0x00000000000000000000000000000000000000aa';

const q = (value: string): string => JSON.stringify(value);
const hex = (n: number): string => `0x${n.toString(16)}`;

export class BatchGenerator {
  readonly #rng: Rng;
  readonly #chain: BatchChain;
  /** The last small id handed out (ids 1, 2, … of this run). */
  #counter = 0;
  /** Fresh writes handed out so far (each goes to each node once; sent again, it answers its hash again). */
  #nextFresh = 0;
  /** Hashes of writes both nodes have (BatchOptions.pendingHashes of the batch being made). */
  #pendingHashes: readonly string[] = [];

  constructor(seed: number, chain: BatchChain) {
    this.#rng = new Rng(seed);
    this.#chain = chain;
  }

  get rng(): Rng {
    return this.#rng;
  }

  #nextId(): number {
    this.#counter += 1;
    return this.#counter;
  }

  batch(options: BatchOptions): GenElement[] {
    this.#pendingHashes = options.pendingHashes;
    const ids: string[] = [];
    const fresh = new Set<number>();
    const out: GenElement[] = [];
    for (let i = 0; i < options.size; i += 1) out.push(this.#element(options, ids, fresh));
    return out;
  }

  /** The body of a batch: the elements with random whitespace between them. */
  render(elements: readonly GenElement[]): string {
    const rng = this.#rng;
    const gaps = [',', ', ', ',\n  ', ' ,'];
    return `${rng.pick(['', ' ', '\n'])}[${rng.pick(['', ' ', '\n'])}${elements.map((e) => e.text).join(rng.pick(gaps))}${rng.pick(['', '\n'])}]`;
  }

  #element(options: BatchOptions, ids: string[], fresh: Set<number>): GenElement {
    const rng = this.#rng;
    if (options.allNotifications) {
      const [method, params] = rng.chance(0.7) ? this.#read() : this.#refused();
      return this.#call('notification', method, params, undefined);
    }
    if (options.plainReads) {
      const id = rng.chance(0.7) ? String(this.#nextId()) : q(`r-${this.#nextId()}`);
      return this.#call('read', ...this.#read(), id);
    }
    const roll = rng.next();
    if (options.writes && roll < 0.12) return this.#write(ids, fresh);
    if (roll < 0.45) return this.#call('read', ...this.#read(), this.#id(ids));
    if (roll < 0.63) return this.#call('cached', ...this.#cached(), this.#id(ids));
    if (roll < 0.66) return this.#call('filter', ...this.#filter(), this.#id(ids));
    if (roll < 0.77) return this.#invalid(ids);
    if (roll < 0.88) return this.#call('refused', ...this.#refused(), this.#id(ids));
    return this.#call('params', ...this.#badParams(), this.#id(ids));
  }

  /** An id's raw text, or undefined (a notification); sometimes one already used in this batch. */
  #id(ids: string[]): string | undefined {
    const rng = this.#rng;
    const roll = rng.next();
    let id: string | undefined;
    if (roll < 0.08) return undefined;
    if (roll < 0.2 && ids.length > 0) id = rng.pick(ids);
    else if (roll < 0.35) id = rng.pick(ODD_IDS);
    else if (roll < 0.4) id = longNumberId(rng);
    else if (roll < 0.45) id = longStringId(rng);
    else if (roll < 0.75) id = String(this.#nextId());
    else id = q(`r-${this.#nextId()}`);
    ids.push(id);
    return id;
  }

  /** A call object's text: members (raw values) in random order, random whitespace. */
  #object(members: Array<[string, string]>): string {
    const rng = this.#rng;
    const order = [...members];
    if (rng.chance(0.3)) {
      for (let i = order.length - 1; i > 0; i -= 1) {
        const j = rng.int(i + 1);
        [order[i], order[j]] = [order[j] as [string, string], order[i] as [string, string]];
      }
    }
    const spaced = rng.chance(0.15);
    const [colon, comma, open, close] = spaced ? [' : ', ',\n ', '{ ', ' }'] : [':', ',', '{', '}'];
    return `${open}${order.map(([key, value]) => `${q(key)}${colon}${value}`).join(comma)}${close}`;
  }

  #members(method: string, params: string | undefined, id: string | undefined): Array<[string, string]> {
    const members: Array<[string, string]> = [
      ['jsonrpc', '"2.0"'],
      ['method', q(method)],
    ];
    if (params !== undefined) members.push(['params', params]);
    if (id !== undefined) members.push(['id', id]);
    return members;
  }

  #call(kind: Kind, method: string, params: string | undefined, id: string | undefined): GenElement {
    const members = this.#members(method, params, id);
    // A member JSON-RPC does not know: the gateway passes the element's bytes on unchanged (anvil
    // answers such a request -32600 "Invalid request"), and keeps such calls out of the response
    // cache (see the coalescing test in batch-equivalence.test.ts).
    if ((kind === 'read' || kind === 'cached') && this.#rng.chance(0.05)) members.push(['x-trace', '"t-1"']);
    const text = this.#object(members);
    return { kind, text, alone: text, id };
  }

  #block(hashes: boolean): string {
    const rng = this.#rng;
    const chain = this.#chain;
    const roll = rng.next();
    if (roll < 0.3) return q(rng.pick(TAGS));
    if (roll < 0.7 || !hashes) return q(hex(rng.int(chain.head + 3)));
    if (roll < 0.8) return q(rng.pick([...chain.finalBlocks, ...chain.recentBlocks, UNKNOWN_HASH]));
    if (roll < 0.9) return `{"blockHash":${q(rng.pick([...chain.finalBlocks, ...chain.recentBlocks]))}}`;
    return `{"blockNumber":${q(hex(rng.int(chain.head + 1)))}}`;
  }

  #read(): [string, string | undefined] {
    const rng = this.#rng;
    const chain = this.#chain;
    const account = rng.pick([...chain.accounts, chain.contract, STRANGER]);
    const atBlock = (first: string, hashes = true) =>
      rng.chance(0.15) ? `[${first}]` : `[${first},${this.#block(hashes)}]`;
    const forms: Array<() => [string, string | undefined]> = [
      () => ['eth_blockNumber', rng.pick([undefined, '[]'])],
      () => ['eth_gasPrice', '[]'],
      () => ['eth_syncing', '[]'],
      () => ['net_listening', '[]'],
      () => ['anvil_getAutomine', '[]'], // allowed by allow_methods
      () => ['eth_getBalance', atBlock(q(account))],
      () => ['eth_getTransactionCount', atBlock(q(account))],
      () => ['eth_getCode', atBlock(q(rng.pick([chain.contract, account])))],
      () => ['eth_getStorageAt', atBlock(`${q(chain.contract)},"0x0"`)],
      () => ['eth_call', atBlock(`{"to":${q(chain.contract)},"data":${q(rng.pick(['0x', '0x01']))}}`)],
      () => ['eth_estimateGas', `[{"from":${q(account)},"to":${q(chain.contract)}},"latest"]`],
      () => [
        'eth_getBlockByNumber',
        `[${q(rng.chance(0.5) ? rng.pick(TAGS) : hex(chain.finalized + 1 + rng.int(chain.head - chain.finalized + 3)))},${rng.chance(0.5)}]`,
      ],
      () => ['eth_getLogs', `[{"fromBlock":"0x0","toBlock":${q(hex(rng.int(chain.head + 1)))}}]`],
      () => ['eth_getLogs', `[{"blockHash":${q(rng.pick(chain.finalBlocks))}}]`],
      () => ['eth_getLogs', `[{"address":${q(chain.contract)},"fromBlock":"0x1","toBlock":"0x1"}]`],
      () => ['eth_feeHistory', `["0x4",${q(rng.pick(['latest', '0x10', hex(chain.head)]))},[25,75]]`],
      () => ['eth_getBlockTransactionCountByNumber', `[${q(hex(rng.int(3)))}]`],
      () => ['eth_getTransactionByBlockNumberAndIndex', `["0x1",${q(hex(rng.int(5)))}]`],
      () => ['eth_getBlockReceipts', `[${q(hex(rng.int(3)))}]`],
      () => ['eth_getUncleCountByBlockNumber', '["0x1"]'],
      () => [
        rng.pick(['eth_getTransactionByHash', 'eth_getTransactionReceipt']),
        `[${q(rng.pick([...chain.recentTxs, ...options(rng, this.#pendingHashes), UNKNOWN_HASH]))}]`,
      ],
    ];
    return rng.pick(forms)();
  }

  #cached(): [string, string | undefined] {
    const rng = this.#rng;
    const chain = this.#chain;
    const forms: Array<() => [string, string | undefined]> = [
      () => ['eth_chainId', rng.pick([undefined, '[]'])],
      () => ['net_version', '[]'],
      () => [
        'eth_getBlockByHash',
        `[${q(rng.pick([...chain.finalBlocks, ...chain.recentBlocks, UNKNOWN_HASH]))},${rng.chance(0.5)}]`,
      ],
      () => ['eth_getBlockByNumber', `[${q(hex(rng.int(chain.finalized + 1)))},${rng.chance(0.5)}]`],
      () => [rng.pick(['eth_getTransactionByHash', 'eth_getTransactionReceipt']), `[${q(rng.pick(chain.finalTxs))}]`],
    ];
    return rng.pick(forms)();
  }

  #filter(): [string, string | undefined] {
    const rng = this.#rng;
    return [
      rng.pick(['eth_getFilterChanges', 'eth_getFilterLogs', 'eth_uninstallFilter']),
      `[${q(hex(1 + rng.int(4000)))}]`,
    ];
  }

  #refused(): [string, string | undefined] {
    const rng = this.#rng;
    return rng.pick<[string, string | undefined]>([
      ['admin_peers', '[]'],
      ['debug_traceTransaction', `[${q(rng.pick(this.#chain.finalTxs))}]`],
      ['personal_listAccounts', '[]'],
      ['txpool_status', '[]'],
      ['miner_start', '[]'],
      ['engine_exchangeCapabilities', '[[]]'],
      ['eth_subscribe', '["newHeads"]'],
      ['eth_unsubscribe', '["0x1"]'],
      ['eth_accounts', '[]'], // deny_methods
      ['web3_clientVersion', '[]'], // deny_methods web3_*
      ['web3_sha3', '["0x68"]'],
      ['anvil_mine', '["0x1"]'], // unknown: mining here would change the chain under the test
      ['evm_mine', undefined],
      ['eth_doesNotExist', '[]'],
      ['x', '[]'],
    ]);
  }

  #badParams(): [string, string | undefined] {
    const rng = this.#rng;
    const chain = this.#chain;
    const account = q(rng.pick(chain.accounts));
    return rng.pick<[string, string | undefined]>([
      ['eth_getBlockByNumber', '["0x01",false]'],
      ['eth_getBlockByNumber', '["latest"]'],
      ['eth_getBlockByNumber', '["latest","true"]'],
      ['eth_getBlockByNumber', '["1a",false]'],
      ['eth_getBlockByNumber', '["0x",true]'],
      ['eth_getBlockByNumber', '["latest",false,1]'],
      ['eth_getBlockByNumber', '{"block":"latest","full":false}'],
      ['eth_getBlockByHash', `[${q(rng.pick(chain.finalBlocks))}]`],
      ['eth_getBalance', `[${account},"LATEST"]`],
      ['eth_getBalance', `[${account},"0x01"]`],
      ['eth_getBalance', `[${account},5]`],
      ['eth_getBalance', `[${account},{"blockHash":"0x12"}]`],
      ['eth_getTransactionCount', `{"address":${account}}`],
      ['eth_call', `[{"to":${q(chain.contract)}},"pending!"]`],
      ['eth_feeHistory', '["0x4"]'],
      ['eth_getLogs', `[{"fromBlock":"0x1","blockHash":${q(rng.pick(chain.finalBlocks))}}]`],
      ['eth_getLogs', '[{"blockHash":"0xabc"}]'],
      ['eth_getLogs', '[{"fromBlock":"0x0","toBlock":"0x2710"}]'], // 10 001 blocks: over max_logs_block_range
    ]);
  }

  #invalid(ids: string[]): GenElement {
    const rng = this.#rng;
    const scalar = (text: string): GenElement => ({ kind: 'invalid', text, alone: text, id: undefined });
    const roll = rng.int(7);
    if (roll === 0) return scalar(rng.pick(['5', '"eth_chainId"', 'null', 'true', '-1.5e3', '{}']));
    if (roll === 1) {
      const text = rng.pick(['[]', '[1]', '[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}]']);
      return { kind: 'invalid', text, alone: '0', id: undefined };
    }
    const id = this.#id(ids);
    const members = this.#members('eth_blockNumber', '[]', id);
    const set = (key: string, value: string | undefined) => {
      const at = members.findIndex(([k]) => k === key);
      if (value === undefined) members.splice(at, 1);
      else if (at < 0) members.push([key, value]);
      else members[at] = [key, value];
    };
    if (roll === 2) set('jsonrpc', rng.pick([undefined, '"1.0"', '2.0', '"2.0 "', 'null']));
    else if (roll === 3) set('method', rng.pick([undefined, '5', '""', 'null', '["eth_chainId"]']));
    else if (roll === 4) set('params', rng.pick(['"x"', '7', 'null', 'true']));
    else if (roll === 5) set('id', rng.pick(['{}', '[]', 'true', '{"a":1}']));
    else {
      const [key, value] = rng.pick<[string, string]>([
        ['id', '2'],
        ['method', '"eth_chainId"'],
        ['params', '[]'],
        ['jsonrpc', '"2.0"'],
      ]);
      members.push([key, value]);
      if (rng.chance(0.3)) members.push(['extra', '1'], ['extra', '2']);
    }
    const text = this.#object(members);
    return { kind: 'invalid', text, alone: text, id };
  }

  #write(ids: string[], fresh: Set<number>): GenElement {
    const rng = this.#rng;
    const chain = this.#chain;
    const id = this.#id(ids) ?? String(this.#nextId()); // a write always has an answer to compare
    const roll = rng.next();
    if (roll < 0.6 && fresh.size < chain.freshWrites.length) {
      // A fresh write (or, once they are all used, one both nodes already have: its hash again),
      // at most once per batch: its calls run side by side, so a second copy would race the first.
      let index = this.#nextFresh < chain.freshWrites.length ? this.#nextFresh++ : rng.int(chain.freshWrites.length);
      while (fresh.has(index)) index = (index + 1) % chain.freshWrites.length;
      fresh.add(index);
      const text = this.#object(
        this.#members('eth_sendRawTransaction', `[${q(chain.freshWrites[index] as string)}]`, id),
      );
      return { kind: 'write', text, alone: text, id, fresh: index };
    }
    if (roll < 0.85) return this.#call('write', 'eth_sendRawTransaction', `[${q(rng.pick(chain.failingWrites))}]`, id);
    if (roll < 0.92) return this.#call('write', 'eth_sendRawTransaction', '[]', id);
    return this.#call(
      'write',
      'eth_sendTransaction',
      `[{"from":${q(STRANGER)},"to":${q(chain.contract)},"value":"0x1"}]`,
      id,
    );
  }
}

/**
 * One of `items` half the time, else none (so unknown hashes stay common). Draws the same number of
 * times whatever `items` holds, so a seed's later bytes do not depend on what earlier runs sent.
 */
function options(rng: Rng, items: readonly string[]): readonly string[] {
  const take = rng.chance(0.5);
  const index = rng.int(Math.max(items.length, 1));
  return take && items.length > 0 ? [items[index] as string] : [];
}
