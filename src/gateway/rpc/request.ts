/**
 * Turns a request body into JSON-RPC calls, validating each before any upstream call (SPEC §2):
 * `jsonrpc` must be "2.0", `method` a non-empty string, `params` an array or object if present, `id` a
 * string, number or null if present (absent = notification). A member given twice is refused, because
 * the client and an origin could disagree about which copy counts. A body nesting arrays and objects
 * more than MAX_REQUEST_DEPTH (64) levels deep is refused whole (400, RPC_TOO_DEEP) before any origin is
 * asked.
 *
 * Nothing is re-serialised: a call keeps the raw bytes of its element and of its id, so forwarding can
 * send the client's own bytes with only the id swapped, and the reply can carry the client's exact id.
 */
import { isUtf8 } from 'node:buffer';
import { SwitchyardError } from '../../errors/base.js';
import { MAX_REQUEST_DEPTH, readBatch, readSingle } from './batch-read.js';
import { NULL_ID } from './id-splice.js';
import { type MemberSpan, scanJson, type ValueSpan } from './json-scan.js';

export interface RpcCall {
  /** The element's own bytes (the whole body for a single request). */
  readonly raw: Buffer;
  /** The id's span inside `raw`; undefined for a notification. */
  readonly id: ValueSpan | undefined;
  /** The id's raw bytes (`null` for a notification, only used in logs). */
  readonly idBytes: Buffer;
  readonly method: string;
  /** Parsed params (for checks only; never re-serialised, so big numbers in them are harmless). */
  readonly params: unknown;
  /**
   * The element has members beyond jsonrpc, id, method and params. Its bytes then say more than its
   * method and params, so its answer is neither taken from nor shared with other calls (the cache).
   */
  readonly extraMembers: boolean;
}

/** One element of the body: a valid call, or the error that element answers with. */
export type Element = { ok: true; call: RpcCall } | { ok: false; error: SwitchyardError; idBytes: Buffer };

export type ParsedBody =
  | { batch: false; element: Element }
  | {
      batch: true;
      elements: Element[];
      /** The ids when the one-pass reader read the batch: plain and unique (plain-id.ts), else false. */
      plainIds?: readonly string[] | false;
    };

const BACKSLASH = 0x5c;

export function parseBody(body: Buffer, maxBatch: number): ParsedBody {
  // Requests and batches as clients write them are read in one pass (batch-read.ts); anything else, the
  // general way. Each reader looks at the first byte that is not whitespace first.
  const common = readBatch(body, maxBatch);
  if (common !== undefined) return { batch: true, elements: common.elements, plainIds: common.plainIds };
  const single = readSingle(body);
  if (single !== undefined) return { batch: false, element: single };
  return parseAny(body, maxBatch);
}

/** Any body, every element with its own verdict (exported for batch-read.test.ts, which compares). */
export function parseAny(body: Buffer, maxBatch: number): ParsedBody {
  const utf8 = isUtf8(body);
  const scanned = utf8 ? scanJson(body, 0, body.length, true, MAX_REQUEST_DEPTH) : undefined;
  if (scanned === undefined) {
    // Only a refused body is scanned again, to tell "too deep" from "not JSON".
    if (utf8 && scanJson(body) !== undefined) {
      throw new SwitchyardError(
        'RPC_TOO_DEEP',
        `Invalid request: the body nests arrays and objects more than ${MAX_REQUEST_DEPTH} levels deep; no origin was asked.`,
        { details: { max_depth: MAX_REQUEST_DEPTH } },
      );
    }
    throw new SwitchyardError(
      'RPC_PARSE_ERROR',
      'Parse error: the body is not valid JSON (UTF-8); send one JSON-RPC request object or an array of them.',
    );
  }
  if (scanned.kind !== 'array') return { batch: false, element: parseSingle(body, scanned) };
  if (scanned.elements.length === 0) {
    throw new SwitchyardError(
      'RPC_EMPTY_BATCH',
      'Invalid request: the batch is an empty array; send at least one request.',
    );
  }
  if (scanned.elements.length > maxBatch) {
    throw new SwitchyardError(
      'BATCH_TOO_LARGE',
      `The batch has ${scanned.elements.length} requests; at most ${maxBatch} are allowed (gateway.max_batch). Split it.`,
      { details: { max_batch: maxBatch, received: scanned.elements.length } },
    );
  }
  // The scan has validated the body, so this cannot throw: one native pass gives every element's
  // decoded members (method, jsonrpc, params) instead of a toString and JSON.parse per element. Only
  // values are taken from it; ids and element bytes stay raw spans.
  const values = JSON.parse(body.toString()) as unknown[];
  return {
    batch: true,
    // The one scan above already found each object element's members (offsets inside the element).
    elements: scanned.elements.map((span, i) => {
      const members = scanned.elementMembers?.[i];
      if (members === undefined) return invalid('the request must be a JSON object', true);
      return parseMembers(body.subarray(span.start, span.end), members, true, values[i] as Decoded);
    }),
  };
}

/** An element's members as JSON.parse decoded them (batches: one parse of the whole body). */
type Decoded = { readonly jsonrpc?: unknown; readonly method?: unknown; readonly params?: unknown };

function invalid(reason: string, inBatch: boolean, idBytes: Buffer = NULL_ID): Element {
  return {
    ok: false,
    idBytes,
    error: new SwitchyardError(
      inBatch ? 'RPC_INVALID_BATCH_ELEMENT' : 'RPC_INVALID_REQUEST',
      `Invalid request: ${reason}. A request is {"jsonrpc":"2.0","method":"…","params":[…],"id":1}.`,
    ),
  };
}

/** A JSON string value's text: its bytes between the quotes when it has no escapes, else JSON.parse. */
function stringValue(raw: Buffer, span: ValueSpan): string {
  const inner = raw.subarray(span.start + 1, span.end - 1);
  return inner.includes(BACKSLASH)
    ? (JSON.parse(raw.toString('utf8', span.start, span.end)) as string)
    : inner.toString();
}

/** A single request (the whole body). */
function parseSingle(body: Buffer, scanned: NonNullable<ReturnType<typeof scanJson>>): Element {
  if (scanned.kind !== 'object') return invalid('the request must be a JSON object', false);
  return parseMembers(body, scanned.members, false);
}

/**
 * A string member's text: from `decoded` when the batch was parsed whole (without duplicates it holds
 * exactly the members the scan found), else from the bytes.
 */
function memberText(raw: Buffer, span: ValueSpan, decoded: Decoded | undefined, key: 'jsonrpc' | 'method'): string {
  return decoded === undefined ? stringValue(raw, span) : (decoded[key] as string);
}

/** An object element from its members (offsets inside `raw`); `decoded`: its values, when parsed. */
function parseMembers(raw: Buffer, members: readonly MemberSpan[], inBatch: boolean, decoded?: Decoded): Element {
  // One pass over the members, no per-call map: the four known members by name, any other name kept
  // only to find duplicates (rare: most requests have exactly the four).
  let version: ValueSpan | undefined;
  let method: ValueSpan | undefined;
  let params: ValueSpan | undefined;
  let id: ValueSpan | undefined;
  let others: string[] | undefined;
  let duplicate: string | undefined;
  for (const member of members) {
    const value = member.value;
    switch (member.key) {
      case 'jsonrpc':
        if (version !== undefined) duplicate ??= 'jsonrpc';
        version = value;
        break;
      case 'method':
        if (method !== undefined) duplicate ??= 'method';
        method = value;
        break;
      case 'params':
        if (params !== undefined) duplicate ??= 'params';
        params = value;
        break;
      case 'id':
        if (id !== undefined) duplicate ??= 'id';
        id = value;
        break;
      default:
        others ??= [];
        if (others.includes(member.key)) duplicate ??= member.key;
        else others.push(member.key);
    }
  }
  const idValid = id === undefined || id.kind === 'string' || id.kind === 'number' || id.kind === 'null';
  const idBytes = id !== undefined && idValid && duplicate !== 'id' ? raw.subarray(id.start, id.end) : NULL_ID;

  if (duplicate !== undefined) return invalid(`member "${duplicate}" appears more than once`, inBatch, idBytes);
  if (version?.kind !== 'string' || memberText(raw, version, decoded, 'jsonrpc') !== '2.0') {
    return invalid('"jsonrpc" must be the string "2.0"', inBatch, idBytes);
  }
  const methodName = method?.kind === 'string' ? memberText(raw, method, decoded, 'method') : '';
  if (methodName === '') return invalid('"method" must be a non-empty string', inBatch, idBytes);
  if (params !== undefined && params.kind !== 'array' && params.kind !== 'object') {
    return invalid('"params" must be an array or an object when present', inBatch, idBytes);
  }
  if (!idValid) return invalid('"id" must be a string, a number or null when present', inBatch);
  return {
    ok: true,
    call: {
      raw,
      id,
      idBytes: id === undefined ? NULL_ID : idBytes,
      method: methodName,
      params: params === undefined ? undefined : decoded === undefined ? parseParams(raw, params) : decoded.params,
      extraMembers: others !== undefined,
    },
  };
}

/** Parsed params; the common empty list is answered without JSON.parse. */
function parseParams(raw: Buffer, span: ValueSpan): unknown {
  if (span.end - span.start === 2) return span.kind === 'array' ? [] : {};
  return JSON.parse(raw.toString('utf8', span.start, span.end));
}

/**
 * A call the gateway makes itself (the subscription hub's log queries, a chunk of a split eth_getLogs, a
 * send's check), written as a client would (`{"jsonrpc":"2.0","id":1,"method":…,"params":…}`) and read
 * by the same parser, so it is an RpcCall like any other.
 */
export function ownCall(method: string, params: readonly unknown[]): RpcCall {
  const parsed = parseBody(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })), 1);
  if (parsed.batch || !parsed.element.ok) throw new Error(`cannot build the ${method} call`);
  return parsed.element.call;
}
