/**
 * The answer of a split eth_getLogs (eth-get-logs.ts) from its pieces (logs-chunks.ts), taken in block
 * order: the first log piece's envelope — its bytes before and after the `result` array, e.g.
 * `{"jsonrpc":"2.0","id":7,"result":` and `}` — around the pieces' log elements joined with commas.
 * Each origin writes a log the same way whichever range it was asked, and each piece holds its range's
 * logs in log-index order, so this is byte for byte the array one origin gives for the whole range. The
 * envelope's id is ours (of the first chunk call): the handler splices the client's in, as for any reply.
 *
 * The first piece that is not logs ends it: an error answer passes to the client as it came (what an
 * origin answered for part of the range is what one origin would answer for all of it), and a chunk no
 * origin answered rejects with the engine's error.
 *
 * Streaming: when the caller may stream (`stream`: an HTTP single request with an id), the answer grew
 * past `streamAfter` bytes, pieces remain, and a stream slot of the client is free (stream-slots.ts;
 * none free: it is collected whole), it resolves with its first bytes and `rest` streams the others as
 * they come — a piece is fetched only when the client has read what came before, so memory stays at
 * `concurrency` chunks. A piece that fails once streaming has begun cuts the client's connection (the
 * status line is gone), as when an origin fails in the middle of a streamed answer.
 */
import { finished, Readable } from 'node:stream';
import type { UpstreamReply } from '../../rpc/forwarder.js';
import type { StreamSlots } from '../stream-slots.js';
import { joinElements, type Piece, type SplitQuery } from './logs-chunks.js';

export interface MergeOptions {
  readonly stream: boolean;
  readonly streamAfter: number;
  readonly slots: StreamSlots | undefined;
  readonly client: string;
}

/** The first log piece's bytes around its result array. */
interface LogsEnvelope {
  readonly head: Buffer;
  readonly tail: Buffer;
  /** The id span in the piece's body, and the length of the array it answered with. */
  readonly id: { start: number; end: number } | undefined;
  readonly arrayLength: number;
  readonly pool: string;
  readonly origin: string;
}

const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');
const COMMA = Buffer.from(',');

/** The merged answer (see the header). */
export async function mergedAnswer(query: SplitQuery, options: MergeOptions): Promise<UpstreamReply> {
  let envelope: LogsEnvelope | undefined;
  const parts: Buffer[] = [];
  let bytes = 0;
  for (;;) {
    const piece = await query.next();
    if (piece === undefined) break;
    if (piece.kind !== 'logs') return ended(query, piece);
    envelope ??= envelopeOf(piece.reply);
    if (piece.elements.length > 0) {
      parts.push(piece.elements);
      bytes += piece.elements.length + 1;
    }
    if (options.stream && bytes > options.streamAfter && query.remaining && mayStream(envelope, options)) {
      return streamed(query, envelope, parts, options);
    }
  }
  query.stop();
  return whole(envelope as LogsEnvelope, joinElements(parts));
}

/** A piece that is not logs: the query stops; an answer is the client's, a failure its error. */
function ended(query: SplitQuery, piece: Exclude<Piece, { kind: 'logs' }>): UpstreamReply {
  query.stop();
  if (piece.kind === 'answer') return piece.reply;
  throw piece.error;
}

function envelopeOf(reply: UpstreamReply): LogsEnvelope {
  const value = reply.outcome?.value as { start: number; end: number };
  return {
    head: reply.body.subarray(0, value.start),
    tail: reply.body.subarray(value.end),
    id: reply.id,
    arrayLength: value.end - value.start,
    pool: reply.pool,
    origin: reply.origin,
  };
}

/** Whether the answer can stream: its id comes before the array, and the client has a stream slot. */
function mayStream(envelope: LogsEnvelope, options: MergeOptions): boolean {
  if (envelope.id === undefined || envelope.id.start >= envelope.head.length) return false;
  return options.slots === undefined || options.slots.take(options.client);
}

/** The whole answer: envelope, array, and the id's and result's spans in it. */
function whole(envelope: LogsEnvelope, elements: Buffer): UpstreamReply {
  const { head, tail, id } = envelope;
  const array = elements.length + 2;
  const body = Buffer.concat([head, OPEN, elements, CLOSE, tail]);
  // An id after the result (rare) moves by as much as the array grew.
  const shift = id !== undefined && id.start >= head.length ? array - envelope.arrayLength : 0;
  return {
    body,
    id: id === undefined ? undefined : { start: id.start + shift, end: id.end + shift },
    pool: envelope.pool,
    origin: envelope.origin,
    outcome: { key: 'result', value: { kind: 'array', start: head.length, end: head.length + array } },
  };
}

/** The first bytes now, the rest as the client reads (see the header). */
function streamed(
  query: SplitQuery,
  envelope: LogsEnvelope,
  parts: readonly Buffer[],
  options: MergeOptions,
): UpstreamReply {
  const first = joinElements(parts);
  let wrote = first.length > 0;
  let pumping = false;
  const rest = new Readable({
    read() {
      void pump();
    },
    destroy(err, callback) {
      query.stop();
      callback(err);
    },
  });
  const pump = async (): Promise<void> => {
    if (pumping) return;
    pumping = true;
    try {
      for (;;) {
        const piece = await query.next();
        if (rest.destroyed) return;
        if (piece === undefined) {
          rest.push(Buffer.concat([CLOSE, envelope.tail]));
          rest.push(null);
          query.stop();
          return;
        }
        if (piece.kind !== 'logs') {
          rest.destroy(streamCut(piece));
          return;
        }
        if (piece.elements.length === 0) continue;
        const more = rest.push(wrote ? Buffer.concat([COMMA, piece.elements]) : piece.elements);
        wrote = true;
        if (!more) return;
      }
    } finally {
      pumping = false;
    }
  };
  const { slots, client } = options;
  if (slots !== undefined) finished(rest, () => slots.release(client));
  return {
    body: Buffer.concat([envelope.head, OPEN, first]),
    id: envelope.id,
    pool: envelope.pool,
    origin: envelope.origin,
    rest,
  };
}

/** Why a streaming split answer was cut: the piece that was not logs. */
function streamCut(piece: Exclude<Piece, { kind: 'logs' }>): Error {
  if (piece.kind === 'failed') {
    return new Error('a chunk of the split eth_getLogs got no answer; the streamed answer is cut', {
      cause: piece.error,
    });
  }
  const at = piece.reply.outcome;
  const text = at === undefined ? '' : piece.reply.body.toString('utf8', at.value.start, at.value.end).slice(0, 300);
  return new Error(`a chunk of the split eth_getLogs was answered ${text}; the streamed answer is cut`);
}
