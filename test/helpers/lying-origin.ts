/**
 * A lying origin for tests: a real node:http server on 127.0.0.1:0 (startHttpServer) in front of a real
 * node (anvil) that forwards every call and rewrites the answers its `lie` picks out — the attacker of
 * SPEC §18 and §20 in a box.
 *
 * - Every request (a single call or a batch) is forwarded as its exact bytes; each call's answer is then
 *   offered to `lie` with the call's method and params and the node's `result`. A lie returns
 *   `{ result }` to answer that instead, `{ error }` to answer a JSON-RPC error, or undefined to pass the
 *   node's answer on. Errors pass on.
 *   `lie` may be swapped at any time (`origin.lie = …`, undefined = honest).
 * - `lies` counts the answers rewritten, so a test can tell the lie reached someone.
 * - Canned lies below, composable with `anyOf`: `headLie` (a far head, a forked head, a head that does
 *   not link — its `eth_blockNumber`, `latest`/`pending` block and state at `latest` all follow it),
 *   `balanceLie` (a made-up balance at `latest`), `blockHashLie` (another block for a hash) and
 *   `blockNumberLie` (an altered block for a number, with a made-up hash).
 * Made-up hashes are derived from what they stand for, so the same lie shows the same hash on every ask
 * (a liar that changes its story each poll is another test). `assertRealHead` checks what a client
 * reads at the head against the node behind. Register `after(() => origin.close())`.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { post, startHttpServer } from './http.js';

export interface LiedCall {
  readonly method: string;
  readonly params: readonly unknown[];
}

/** What to answer instead of `result` (another result, or a JSON-RPC error), or undefined to pass it on. */
export type Lie = (
  call: LiedCall,
  result: unknown,
) => { result: unknown } | { error: { code: number; message: string } } | undefined;

export interface LyingOrigin {
  readonly url: string;
  lie: Lie | undefined;
  /** Answers rewritten so far. */
  readonly lies: number;
  close(): Promise<void>;
}

interface Answer {
  id?: unknown;
  result?: unknown;
  error?: unknown;
}

export async function startLyingOrigin(upstream: string, lie?: Lie): Promise<LyingOrigin> {
  let lies = 0;
  const origin = { lie };
  const rewrite = (call: unknown, answer: Answer): Answer => {
    const { method, params } = (call ?? {}) as { method?: unknown; params?: unknown };
    if (origin.lie === undefined || typeof method !== 'string' || !('result' in answer)) return answer;
    const told = origin.lie({ method, params: Array.isArray(params) ? params : [] }, answer.result);
    if (told === undefined) return answer;
    lies += 1;
    if ('error' in told) return { jsonrpc: '2.0', id: answer.id, error: told.error } as Answer;
    return { ...answer, result: told.result };
  };
  const server = await startHttpServer(async (_req, res, body) => {
    const forwarded = await post(upstream, body);
    let calls: unknown;
    let answers: unknown;
    try {
      calls = JSON.parse(body);
      answers = JSON.parse(forwarded.text);
    } catch {
      res.writeHead(forwarded.status, { 'content-type': 'application/json' }).end(forwarded.text);
      return;
    }
    const told = Array.isArray(answers)
      ? answers.map((answer: Answer) =>
          rewrite(Array.isArray(calls) ? calls.find((call) => call?.id === answer.id) : undefined, answer),
        )
      : rewrite(calls, answers as Answer);
    res.writeHead(forwarded.status, { 'content-type': 'application/json' }).end(JSON.stringify(told));
  });
  return {
    url: server.url,
    get lie() {
      return origin.lie;
    },
    set lie(next: Lie | undefined) {
      origin.lie = next;
    },
    get lies() {
      return lies;
    },
    close: () => server.close(),
  };
}

/** A 32-byte hash made up from `what` (the same `what`, the same hash). */
export function madeUpHash(what: string): string {
  return `0x${createHash('sha256').update(what).digest('hex')}`;
}

const hex = (n: number) => `0x${n.toString(16)}`;

/** The first lie that answers. */
export function anyOf(...lies: Lie[]): Lie {
  return (call, result) => {
    for (const lie of lies) {
      const told = lie(call, result);
      if (told !== undefined) return told;
    }
    return undefined;
  };
}

export type HeadLieKind = 'far' | 'fork' | 'unlinked';

/**
 * A head the node does not have, in `eth_blockNumber` and the `latest`/`pending` block:
 *   far      — block 1,000,000 on a made-up parent;
 *   fork     — the node's head height with a made-up hash, on the node's real parent (a one-block fork);
 *   unlinked — one above the node's head, on a made-up parent.
 * Blocks by number and hash stay the node's (as a liar that only lies about its head).
 */
export function headLie(kind: HeadLieKind): Lie {
  const fake = (real: Record<string, unknown>): Record<string, unknown> => {
    const number = Number(real.number);
    const height = kind === 'far' ? 1_000_000 : kind === 'fork' ? number : number + 1;
    const parentHash = kind === 'fork' ? real.parentHash : madeUpHash(`${kind}:parent:${height}`);
    return { ...real, number: hex(height), hash: madeUpHash(`${kind}:${height}`), parentHash };
  };
  return (call, result) => {
    if (call.method === 'eth_blockNumber' && typeof result === 'string') {
      const number = Number(result);
      return { result: hex(kind === 'far' ? 1_000_000 : kind === 'fork' ? number : number + 1) };
    }
    const tag = call.params[0];
    if (call.method === 'eth_getBlockByNumber' && (tag === 'latest' || tag === 'pending') && result !== null) {
      return { result: fake(result as Record<string, unknown>) };
    }
    return undefined;
  };
}

/** `balance` for every eth_getBalance at `latest` (or with no block). */
export function balanceLie(balance: string): Lie {
  return (call) =>
    call.method === 'eth_getBalance' && (call.params[1] === undefined || call.params[1] === 'latest')
      ? { result: balance }
      : undefined;
}

/** eth_getBlockByHash answered with the node's block altered to carry another hash (and another miner). */
export function blockHashLie(): Lie {
  return (call, result) =>
    call.method === 'eth_getBlockByHash' && result !== null && typeof result === 'object'
      ? { result: altered(result as Record<string, unknown>) }
      : undefined;
}

/** eth_getBlockByNumber at a hex number answered with the node's block altered (another hash and miner). */
export function blockNumberLie(): Lie {
  return (call, result) =>
    call.method === 'eth_getBlockByNumber' &&
    typeof call.params[0] === 'string' &&
    call.params[0].startsWith('0x') &&
    result !== null &&
    typeof result === 'object'
      ? { result: altered(result as Record<string, unknown>) }
      : undefined;
}

function altered(block: Record<string, unknown>): Record<string, unknown> {
  return {
    ...block,
    hash: madeUpHash(`altered:${String(block.hash)}`),
    miner: '0x000000000000000000000000000000000000dead',
    extraData: '0x6c6965',
  };
}

/** A JSON-RPC call that resolves its result (and throws on an error answer). */
export type Ask = <T = unknown>(method: string, params?: unknown[]) => Promise<T>;

/**
 * One round of what a client reads at the head through `ask` (the gateway), checked against the node
 * behind the liar: eth_blockNumber is no higher than the node's, the `latest` block is the node's block at
 * that height, and `address`'s balance at `latest` is `balance`.
 */
export async function assertRealHead(ask: Ask, node: Ask, address: string, balance: string): Promise<void> {
  const number = Number(await ask<string>('eth_blockNumber'));
  const real = Number(await node<string>('eth_blockNumber'));
  assert.ok(number <= real, `eth_blockNumber ${number} is not the node's (${real})`);
  const latest = await ask<{ number: string; hash: string }>('eth_getBlockByNumber', ['latest', false]);
  const ours = await node<{ hash: string }>('eth_getBlockByNumber', [latest.number, false]);
  assert.equal(latest.hash, ours.hash, `the latest block ${Number(latest.number)} is the node's`);
  assert.equal(await ask('eth_getBalance', [address, 'latest']), balance);
}
