/**
 * The two drivers of the llhttp differential test (llhttp-differential.test.ts, which explains the
 * choice of driver and lists the known differences): `ours` runs the listener's request parser,
 * `theirs` Node's llhttp, on the same pieces of input, and each reduces what it read to an `Outcome`;
 * `compare` finds where two outcomes part (`Divergence`), after normalizing what is timing or
 * connection handling rather than acceptance.
 */
import { createRequire } from 'node:module';
import {
  HEAD_MAX_BYTES,
  type ParserSink,
  type RequestHead,
  RequestParser,
} from '../../src/http1/server/request-parser.js';
import type { RequestRefusal } from '../../src/http1/server/request-refusal.js';

/** No body limit: the 413 is policy, not framing, and must not decide an outcome here. */
const MAX_BODY = Number.MAX_SAFE_INTEGER;

// ---------------------------------------------------------------------------------------------------
// Outcomes: what each parser made of an input.

/** One delivered (complete) request, reduced to what both parsers report. */
export interface Message {
  method: string;
  target: string;
  version: string;
  /** Lower-cased name, value… for the headers that decide framing and connection reuse, in order. */
  framing: string[];
  keepAlive: boolean;
  body: string;
}

/**
 * How the input ended after the delivered messages: nothing pending (`idle`), waiting for more of a
 * head (`head`) or of a body (`body`), `refused`, `closed` (ours: the connection stops reading after
 * a request that does not keep the connection alive, as connection.ts does), or `upgrade` (llhttp
 * hands the connection over after an Upgrade / CONNECT request).
 */
export type End = 'idle' | 'head' | 'body' | 'refused' | 'closed' | 'upgrade';

export interface Outcome {
  messages: Message[];
  /** The head of a request whose body did not end (or, for llhttp, an upgrade request). */
  pending: Message | undefined;
  /** Ours: the input offset after each delivered message (filled only by `boundaries`). */
  ends: number[];
  end: End;
  /** Ours: `kind: message` of the RequestRefusal; llhttp: `CODE: reason`. */
  reason: string;
}

const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'host']);

function framing(headers: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    const name = (headers[i] as string).toLowerCase();
    if (FRAMING.has(name)) out.push(name, headers[i + 1] as string);
  }
  return out;
}

export function ours(pieces: readonly Buffer[]): Outcome {
  const outcome: Outcome = { messages: [], pending: undefined, ends: [], end: 'idle', reason: '' };
  let current: Message | undefined;
  let fed = 0;
  const parser = new RequestParser(
    {
      requestStarted() {},
      head(head: RequestHead) {
        current = {
          method: head.method,
          target: head.target,
          version: `1.${head.minor}`,
          framing: framing(head.headers),
          keepAlive: head.keepAlive,
          body: '',
        };
        outcome.pending = current;
      },
      body(piece: Buffer) {
        (current as Message).body += piece.toString('latin1');
      },
      complete() {
        const message = current as Message;
        outcome.messages.push(message);
        outcome.pending = undefined;
        outcome.ends.push(fed);
        // connection.ts stops the parser after a request that closes the connection.
        if (!message.keepAlive) {
          parser.stop();
          outcome.end = 'closed';
        }
        return false;
      },
      fail(error: RequestRefusal) {
        outcome.end = 'refused';
        outcome.reason = `${error.kind}: ${error.message}`;
      },
    } satisfies ParserSink,
    MAX_BODY,
  );
  for (const piece of pieces) {
    fed += piece.length;
    parser.execute(piece);
  }
  if (outcome.end === 'idle' && !parser.idle) outcome.end = parser.inBody ? 'body' : 'head';
  return outcome;
}

interface LlhttpError extends Error {
  code: string;
  reason: string;
}

/** The parts of `_http_common`'s HTTPParser used here (an internal, untyped module). */
interface HttpParserClass {
  new (): {
    initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
    execute(data: Buffer): number | LlhttpError;
    finish(): undefined | LlhttpError;
    close(): void;
    [callback: number]: unknown;
  };
  REQUEST: number;
  kLenientNone: number;
  kOnHeaders: number;
  kOnHeadersComplete: number;
  kOnBody: number;
  kOnMessageComplete: number;
}

function loadLlhttp(): { HTTPParser: HttpParserClass; methods: string[] } | undefined {
  try {
    const common = createRequire(import.meta.url)('_http_common') as {
      HTTPParser?: HttpParserClass;
      methods?: string[];
    };
    if (common.HTTPParser === undefined || common.methods === undefined) return undefined;
    return { HTTPParser: common.HTTPParser, methods: common.methods };
  } catch {
    return undefined;
  }
}

export const llhttp = loadLlhttp();

export function theirs(pieces: readonly Buffer[]): Outcome {
  const { HTTPParser, methods } = llhttp as NonNullable<typeof llhttp>;
  const outcome: Outcome = { messages: [], pending: undefined, ends: [], end: 'idle', reason: '' };
  const parser = new HTTPParser();
  parser.initialize(HTTPParser.REQUEST, {}, HEAD_MAX_BYTES, HTTPParser.kLenientNone);
  let headers: string[] = [];
  let url = '';
  let current: Message | undefined;
  // Heads with many headers arrive in batches through kOnHeaders (as _http_common's own callbacks read them).
  parser[HTTPParser.kOnHeaders] = (batch: string[], part: string) => {
    headers.push(...batch);
    url += part;
  };
  parser[HTTPParser.kOnHeadersComplete] = (
    major: number,
    minor: number,
    batch: string[] | undefined,
    method: number,
    part: string | undefined,
    _status: unknown,
    _statusText: unknown,
    upgrade: boolean,
    keepAlive: boolean,
  ) => {
    if (batch !== undefined) headers.push(...batch);
    if (part !== undefined) url += part;
    current = {
      method: methods[method] as string,
      target: url,
      version: `${major}.${minor}`,
      framing: framing(headers),
      keepAlive,
      body: '',
    };
    outcome.pending = current;
    headers = [];
    url = '';
    if (upgrade) outcome.end = 'upgrade';
    return 0;
  };
  parser[HTTPParser.kOnBody] = (piece: Buffer) => {
    (current as Message).body += piece.toString('latin1');
  };
  parser[HTTPParser.kOnMessageComplete] = () => {
    outcome.messages.push(current as Message);
    outcome.pending = undefined;
    current = undefined;
    // Trailers arrive through kOnHeaders (with the target again); like _http_common, drop them here.
    headers = [];
    url = '';
  };
  for (const piece of pieces) {
    const result = parser.execute(piece);
    if (typeof result !== 'number') {
      outcome.end = 'refused';
      outcome.reason = `${result.code}: ${result.reason}`;
      break;
    }
    if (outcome.end === 'upgrade') break;
  }
  if (outcome.end === 'idle' && parser.finish() !== undefined) outcome.end = current === undefined ? 'head' : 'body';
  if (outcome.end === 'upgrade') outcome.pending = outcome.messages.pop();
  parser.close();
  return outcome;
}

// ---------------------------------------------------------------------------------------------------
// Comparing, with normalizations for what is timing or connection handling, not acceptance.

/** Where two outcomes part: the first message index at which they differ, and each side there. */
export interface Divergence {
  /** The input compared (after the probes of `compare`), as latin1. */
  input: string;
  /** Index of the first message that differs. */
  at: number;
  ours: Outcome;
  theirs: Outcome;
  /** The message each delivered at `at`, if any. */
  oursMessage: Message | undefined;
  theirsMessage: Message | undefined;
  /** The head each read at `at`: the delivered message, or the pending head of an unfinished one. */
  oursHead: Message | undefined;
  theirsHead: Message | undefined;
}

export const b = (text: string) => Buffer.from(text, 'latin1');
const CRLF2 = Buffer.from('\r\n\r\n', 'latin1');
const NEXT = Buffer.from('GET /next HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1');

function sameMessage(a: Message | undefined, b: Message | undefined): boolean {
  return a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

/** Compares both parsers on `pieces` (the same pieces for both); undefined when they agree. */
export function compare(pieces: readonly Buffer[]): Divergence | undefined {
  const mine = ours(pieces);
  const other = theirs(pieces);
  // llhttp refuses at the first bad byte; ours judges a head once its empty line arrived (and
  // llhttp, too, reads some faults only at the end of a line). So a cut-off head one side refused is
  // finished with CRLF CRLF (the refusing side's outcome cannot change): the other must refuse it too.
  // Ours counts empty lines after a request as the start of the next head, llhttp as nothing; so
  // a next request is appended, and both must read it alike.
  let probe: Buffer | undefined;
  if ((mine.end === 'head' && other.end === 'refused') || (mine.end === 'refused' && other.end === 'head'))
    probe = CRLF2;
  else if (mine.end === 'head' && other.end === 'idle') probe = NEXT;
  if (probe !== undefined) {
    const probed = [...pieces, probe];
    return compareOutcomes(probed, ours(probed), theirs(probed));
  }
  return compareOutcomes(pieces, mine, other);
}

function compareOutcomes(pieces: readonly Buffer[], mine: Outcome, other: Outcome): Divergence | undefined {
  if (mine.end === 'closed' && other.messages.length >= mine.messages.length) {
    // The listener reads nothing after a request that closes the connection (nor does a node:http
    // server answer it): whatever llhttp makes of the bytes after it is never served.
    other = { ...other, messages: other.messages.slice(0, mine.messages.length), pending: undefined, end: 'closed' };
  }
  let at = 0;
  while (sameMessage(mine.messages[at], other.messages[at])) at += 1;
  if (at === mine.messages.length && at === other.messages.length && mine.end === other.end) return undefined;
  const head = (o: Outcome) => o.messages[at] ?? (at === o.messages.length ? o.pending : undefined);
  return {
    input: Buffer.concat(pieces).toString('latin1'),
    at,
    ours: mine,
    theirs: other,
    oursMessage: mine.messages[at],
    theirsMessage: other.messages[at],
    oursHead: head(mine),
    theirsHead: head(other),
  };
}

/** Input offsets after each request ours delivers (fed one byte at a time, so each is exact). */
export function boundaries(input: Buffer): number[] {
  return ours(Array.from(input, (_, i) => input.subarray(i, i + 1))).ends;
}
