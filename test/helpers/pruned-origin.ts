/**
 * A pruned origin for tests: a real node:http server on 127.0.0.1:0 in front of a real anvil that answers
 * like a geth or erigon node which pruned the state below `earliest`.
 *
 * - State reads — eth_getBalance, eth_getTransactionCount, eth_getCode, eth_getStorageAt, eth_call,
 *   eth_estimateGas, eth_createAccessList, eth_getProof — pinned to a block below `earliest` are answered
 *   with the flavour's own error, HTTP 200, code -32000:
 *     geth   — `historical state <state root, hex without 0x> is not available` (core/state/database_history.go,
 *              what geth ≥ 1.16 answers for any state read below its retained window);
 *     erigon — `old data not available due to pruning` (the state reader's PrunedError, erigon 3.0–3.1).
 *   The block may be a number, `earliest`, a 32-byte block hash, or an EIP-1898 object ({blockNumber} or
 *   {blockHash}); hashes and numbers are looked up on anvil (eth_getBlockByHash / eth_getBlockByNumber), which
 *   also gives geth's state root. Tags other than `earliest` (latest, pending, safe, finalized), an absent
 *   block parameter, a block anvil does not have (unknown hash, above its head) and anything unparsable go
 *   to anvil, which answers them itself.
 * - Everything else is forwarded to anvil and its answer comes back byte for byte (status, content type,
 *   body). A single request that is not answered here is forwarded as the exact bytes received.
 * - Batches are answered as geth and erigon answer them: one array, one answer per call in request order,
 *   none for notifications (a single notification below `earliest` gets the error with id null). The calls
 *   not answered here go to anvil as one batch of their exact bytes; ids are the raw JSON bytes the client
 *   sent (anvil's answers are matched back by raw id, else by order).
 *   When anvil refuses the forwarded part as a whole (it rejects ids of 2^64−1 and above, for one), its
 *   answer is returned as it is. Anvil's answers keep anvil's formatting; a locally built answer is compact
 *   JSON ending in a newline, as geth's encoder writes it.
 * - `missingAnswers` counts calls answered with the error; `forwarded` counts calls sent to anvil
 *   (`forwardedOf(method)`: single requests of one method).
 *   `setEarliest` moves the window, as a real node's window moves while it prunes.
 * Register `after(() => origin.close())`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { scanJson, type ValueSpan } from '../../src/gateway/rpc/json-scan.js';

export type PrunedFlavour = 'geth' | 'erigon';

export interface PrunedOriginOptions {
  /** The anvil (or any JSON-RPC node) behind it. */
  readonly upstream: string;
  /** Lowest block whose state is kept; reads pinned below it get the missing-state error. */
  readonly earliest: number;
  readonly flavour: PrunedFlavour;
}

export interface PrunedOrigin {
  readonly url: string;
  readonly earliest: number;
  /** Calls answered with the missing-state error so far. */
  readonly missingAnswers: number;
  /** Calls forwarded to the upstream so far. */
  readonly forwarded: number;
  /** Calls of one method forwarded to the upstream so far (single requests). */
  forwardedOf(method: string): number;
  setEarliest(block: number): void;
  close(): Promise<void>;
}

/** Where each state read carries its block parameter. */
const BLOCK_PARAM: Readonly<Record<string, number>> = {
  eth_getBalance: 1,
  eth_getTransactionCount: 1,
  eth_getCode: 1,
  eth_getStorageAt: 2,
  eth_call: 1,
  eth_estimateGas: 1,
  eth_createAccessList: 1,
  eth_getProof: 2,
};

const ERIGON_PRUNED = 'old data not available due to pruning';

interface Upstream {
  status: number;
  contentType: string;
  body: Buffer;
}

interface Call {
  /** Raw id bytes; undefined for a notification. */
  id: Buffer | undefined;
  method: unknown;
  params: unknown;
}

export async function startPrunedOrigin(options: PrunedOriginOptions): Promise<PrunedOrigin> {
  const upstreamUrl = new URL(options.upstream);
  const agent = new http.Agent({ keepAlive: true });
  let earliest = options.earliest;
  let missingAnswers = 0;
  let forwarded = 0;
  const byMethod = new Map<string, number>();

  const postUpstream = (body: Buffer): Promise<Upstream> =>
    new Promise((resolve, reject) => {
      const req = http.request(
        upstreamUrl,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 502,
              contentType: res.headers['content-type'] ?? 'application/json',
              body: Buffer.concat(chunks),
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  /** The block header anvil has for a number or hash; undefined when it has none. */
  const header = async (block: number | string): Promise<{ number: number; stateRoot: string } | undefined> => {
    const [method, param] =
      typeof block === 'number' ? ['eth_getBlockByNumber', `0x${block.toString(16)}`] : ['eth_getBlockByHash', block];
    const answer = await postUpstream(
      Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [param, false] })),
    );
    const result = (JSON.parse(answer.body.toString()) as { result?: { number?: string; stateRoot?: string } | null })
      .result;
    if (typeof result?.number !== 'string' || typeof result.stateRoot !== 'string') return undefined;
    return { number: Number(result.number), stateRoot: result.stateRoot };
  };

  /** The error bytes to answer `call` with, or undefined when it goes to the upstream. */
  const prunedAnswer = async (call: Call): Promise<Buffer | undefined> => {
    if (typeof call.method !== 'string' || !Array.isArray(call.params)) return undefined;
    const index = BLOCK_PARAM[call.method];
    if (index === undefined) return undefined;
    const pinned = pinnedBlock(call.params[index]);
    if (pinned === undefined) return undefined;
    if (typeof pinned === 'number' && pinned >= earliest) return undefined;
    const found = await header(pinned);
    if (found === undefined || found.number >= earliest) return undefined;
    const message =
      options.flavour === 'geth' ? `historical state ${found.stateRoot.slice(2)} is not available` : ERIGON_PRUNED;
    return errorBytes(call.id ?? Buffer.from('null'), -32000, message);
  };

  const answerBatch = async (body: Buffer, elements: readonly ValueSpan[]): Promise<Upstream> => {
    const calls = elements.map((span) => readCall(body, span));
    const local = await Promise.all(calls.map((call) => (call === undefined ? undefined : prunedAnswer(call))));
    const rest = elements.filter((_, i) => local[i] === undefined).map((span) => body.subarray(span.start, span.end));
    let upstreamAnswers: Buffer[] = [];
    if (rest.length > 0) {
      forwarded += rest.length;
      const answer = await postUpstream(Buffer.concat([Buffer.from('['), joinBuffers(rest), Buffer.from(']')]));
      const scanned = scanJson(answer.body);
      if (scanned?.kind !== 'array') return answer;
      upstreamAnswers = scanned.elements.map((span) => answer.body.subarray(span.start, span.end));
    }
    const out: Buffer[] = [];
    for (const [i, call] of calls.entries()) {
      const mine = local[i];
      if (mine !== undefined) {
        if (call?.id === undefined) continue;
        missingAnswers += 1;
        out.push(mine);
        continue;
      }
      const theirs = takeAnswer(upstreamAnswers, call?.id);
      if (theirs !== undefined) out.push(theirs);
    }
    out.push(...upstreamAnswers);
    return {
      status: 200,
      contentType: 'application/json',
      body: Buffer.concat([Buffer.from('['), joinBuffers(out), Buffer.from(']\n')]),
    };
  };

  const answer = async (body: Buffer): Promise<Upstream> => {
    const scanned = scanJson(body);
    if (scanned?.kind === 'array' && scanned.elements.length > 0) return answerBatch(body, scanned.elements);
    const call = scanned?.kind === 'object' ? readCall(body, scanned) : undefined;
    const mine = call === undefined ? undefined : await prunedAnswer(call);
    if (mine !== undefined) {
      missingAnswers += 1;
      return { status: 200, contentType: 'application/json', body: Buffer.concat([mine, Buffer.from('\n')]) };
    }
    forwarded += 1;
    if (typeof call?.method === 'string') byMethod.set(call.method, (byMethod.get(call.method) ?? 0) + 1);
    return postUpstream(body);
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      answer(Buffer.concat(chunks)).then(
        (reply) => {
          res.writeHead(reply.status, { 'content-type': reply.contentType, 'content-length': reply.body.length });
          res.end(reply.body);
        },
        () => res.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    get earliest() {
      return earliest;
    },
    get missingAnswers() {
      return missingAnswers;
    },
    forwardedOf: (method: string) => byMethod.get(method) ?? 0,
    get forwarded() {
      return forwarded;
    },
    setEarliest: (block: number) => {
      earliest = block;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}

/** A block number, a block hash to look up, or undefined for a head-relative or unparsable parameter. */
function pinnedBlock(param: unknown): number | string | undefined {
  if (typeof param === 'object' && param !== null) {
    const { blockNumber, blockHash } = param as { blockNumber?: unknown; blockHash?: unknown };
    return pinnedBlock(blockNumber ?? blockHash);
  }
  if (typeof param !== 'string') return undefined;
  if (param === 'earliest') return 0;
  if (/^0x[0-9a-fA-F]{64}$/.test(param)) return param;
  if (/^0x[0-9a-fA-F]{1,13}$/.test(param)) return Number.parseInt(param, 16);
  return undefined;
}

function readCall(body: Buffer, span: ValueSpan): Call | undefined {
  const scanned = scanJson(body, span.start, span.end);
  if (scanned?.kind !== 'object') return undefined;
  const idSpan = scanned.members.find((member) => member.key === 'id')?.value;
  const parsed = JSON.parse(body.subarray(span.start, span.end).toString()) as { method?: unknown; params?: unknown };
  return {
    id: idSpan === undefined ? undefined : body.subarray(idSpan.start, idSpan.end),
    method: parsed.method,
    params: parsed.params,
  };
}

/** Removes and returns the first upstream answer with this raw id, else the first one. */
function takeAnswer(answers: Buffer[], id: Buffer | undefined): Buffer | undefined {
  if (id === undefined) return undefined;
  const index = answers.findIndex((answer) => {
    const scanned = scanJson(answer);
    const idSpan = scanned?.members.find((member) => member.key === 'id')?.value;
    return idSpan !== undefined && answer.subarray(idSpan.start, idSpan.end).equals(id);
  });
  return answers.splice(index === -1 ? 0 : index, 1)[0];
}

function errorBytes(id: Buffer, code: number, message: string): Buffer {
  return Buffer.concat([
    Buffer.from('{"jsonrpc":"2.0","id":'),
    id,
    Buffer.from(`,"error":${JSON.stringify({ code, message })}}`),
  ]);
}

function joinBuffers(parts: readonly Buffer[]): Buffer {
  return Buffer.concat(parts.flatMap((part, i) => (i === 0 ? [part] : [Buffer.from(','), part])));
}
