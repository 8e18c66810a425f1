import type { Clock } from '../../clock.js';
import { bodilessRequest, ClientError, type EndpointGuard, requestBytes, requestHead } from '../../http1/index.js';
import type { OutboundPolicy, TargetRules } from '../../outbound/policy.js';
import { ProbeExchange } from './probe-exchange.js';
import { ProbePools } from './probe-pools.js';
import { failed, type ProbeResult } from './result.js';

/**
 * The HTTP client of the monitors: the project's own HTTP/1.1 client (http1/), the gateway's, through
 * shared keep-alive pools (probe-pools.ts: per destination, `allow_insecure` and outbound rules; idle
 * sockets close after 4 s). It costs about half the CPU per request of undici, which the monitors used
 * before (docs/benchmarks.md, "Management API leg"). Every attempt has a hard deadline of the monitor's
 * `timeout`, from sending to the answer's end, the wait for a connection and the connect included.
 * Bodies are read up to a cap (monitors look for a substring or a small JSON answer, never more;
 * probe-exchange.ts); `rttMs` is the time to the answer's head. A request without a body (GET, HEAD, …)
 * carries no Content-Length; an answer to HEAD has none. A request that may be repeated (`replayable`)
 * is sent once more when it met a keep-alive socket the origin had just closed.
 *
 * Targets: `forAccount(id)` gives the transport for one pool's account, which applies that account's
 * outbound rules (outbound/policy.ts) to every request it sends — the first URL and every redirect hop
 * before sending (literal IPs never reach a lookup), and every resolved address at connect time (the
 * pools of each kind of rules connect through that rules' guard, whose lookup refuses). A refused
 * request is a failed, not retried, check whose reason starts "target not allowed:". The unbound
 * transport (used only by tests that probe local servers directly) applies the rules of a trusted
 * account: local targets allowed, the always-refused set still refused. A view
 * remembers the URL checks it made (by `href`; its rules never change), so the three calls of a jsonrpc
 * check pay for one; `forAccount` makes a fresh view per round, so nothing is remembered longer than a
 * round.
 */
export interface ProbeRequest {
  url: URL;
  method: string;
  headers: Record<string, string | string[]>;
  body?: string;
  timeoutMs: number;
  allowInsecure: boolean;
  maxBodyBytes: number;
  /** Safe to send twice (a read): may be replayed once after a stale keep-alive socket. */
  replayable: boolean;
}

export interface ProbeResponse {
  status: number;
  /** The Location header, when the answer carried one (once). */
  location: string | undefined;
  body: string;
  rttMs: number;
}

/** A bound on the URL checks one view remembers (a round checks a pool's origins, at most a few hundred). */
const MAX_CHECKED_URLS = 1024;

const OPERATOR_RULES: TargetRules = { allowLocal: true, localRefusal: '', schemes: ['http:', 'https:'] };

export interface ProbeTransportOptions {
  /** The policy `forAccount` applies: the one built from the config (main.ts). */
  outbound: OutboundPolicy;
  /** Measures each answer's rtt (monotonic). */
  clock: Clock;
}

export class ProbeTransport {
  readonly #outbound: OutboundPolicy;
  readonly #clock: Clock;
  readonly #rules: TargetRules;
  /** Names the rules in the pools' keys. */
  readonly #rulesKey: string;
  /** Shared by every account's view. */
  readonly #pools: ProbePools;
  /** The connect-time check of `#rules`, made on first use. */
  #guard: EndpointGuard | undefined;
  /** URL checks this view made: href → the refusal's message, or null when allowed. */
  readonly #checked = new Map<string, string | null>();
  /**
   * The last request head this view built, per headers object: a check sends its calls with one headers
   * object, to one URL, with one method (the three calls of a jsonrpc check), so they share it.
   */
  readonly #heads = new WeakMap<ProbeRequest['headers'], { href: string; method: string; head: Buffer }>();

  /** `bound` is for `forAccount` only: the view's rules and the pools it shares. */
  constructor(options: ProbeTransportOptions, bound?: { rules: TargetRules; pools: ProbePools }) {
    this.#outbound = options.outbound;
    this.#clock = options.clock;
    this.#rules = bound?.rules ?? OPERATOR_RULES;
    this.#rulesKey = `${this.#rules.allowLocal}|${this.#rules.localRefusal}`;
    this.#pools = bound?.pools ?? new ProbePools();
  }

  /** The transport for probing a pool of `accountId`: that account's outbound rules apply. */
  forAccount(accountId: string): ProbeTransport {
    const options = { outbound: this.#outbound, clock: this.#clock };
    return new ProbeTransport(options, { rules: this.#outbound.rulesFor(accountId), pools: this.#pools });
  }

  /** Open connection pools (one per destination and kind of rules; tests). */
  get pools(): ProbePools {
    return this.#pools;
  }

  /** One attempt: a response, or a failed ProbeResult saying why none arrived. */
  async send(req: ProbeRequest): Promise<ProbeResponse | ProbeResult> {
    const href = req.url.href;
    let refusal = this.#checked.get(href);
    if (refusal === undefined) {
      try {
        this.#outbound.checkUrl(req.url, this.#rules);
        refusal = null;
      } catch (err) {
        refusal = (err as Error).message;
      }
      if (this.#checked.size < MAX_CHECKED_URLS) this.#checked.set(href, refusal);
    }
    if (refusal !== null) return failed(refusal);
    // Refused by the monitor schema; a row written before that rule still gets a reason, not a hang.
    if (req.method === 'CONNECT') return failed('request failed: CONNECT is not a check method');
    let exchange: ProbeExchange;
    try {
      this.#guard ??= this.#outbound.connectGuard(this.#rules);
      const pool = this.#pools.pool(req.url, req.allowInsecure, this.#rulesKey, this.#guard);
      exchange = new ProbeExchange(this.#bytes(req), req.timeoutMs, req.replayable, req.maxBodyBytes, this.#clock);
      pool.dispatch(exchange);
    } catch (err) {
      // A request that cannot be written (a header HTTP does not allow) fails the same way every time.
      return failed(`request failed: ${(err as Error).message}`.slice(0, 200));
    }
    try {
      const { status, body, location } = await exchange.response;
      return { status, location, body: body.toString('utf8'), rttMs: exchange.rttMs };
    } catch (err) {
      if (isTimeout(err)) {
        return { ...failed(`timeout after ${formatSeconds(req.timeoutMs)}`), retryable: true, timed_out: true };
      }
      const reason = describeTransportError(err);
      // A refusal at connect time (a name resolving to a refused address) is not retried.
      return reason.startsWith(TARGET_NOT_ALLOWED) ? failed(reason) : { ...failed(reason), retryable: true };
    }
  }

  /** The request's bytes: the request line, `host` (unless given) and the headers, then the body if any. */
  #bytes(req: ProbeRequest): Buffer {
    if (req.body === undefined) return bodilessRequest(req.method, pathOf(req.url), headerLines(req));
    const href = req.url.href;
    const last = this.#heads.get(req.headers);
    let head: Buffer;
    if (last !== undefined && last.href === href && last.method === req.method) {
      head = last.head;
    } else {
      head = requestHead(req.method, pathOf(req.url), headerLines(req));
      this.#heads.set(req.headers, { href, method: req.method, head });
    }
    return requestBytes(head, Buffer.from(req.body, 'utf8'));
  }

  /** Closes the pools of every view (call it on the transport that made them); running requests finish. */
  async close(): Promise<void> {
    this.#pools.close();
  }
}

export function isProbeResponse(value: ProbeResponse | ProbeResult): value is ProbeResponse {
  return 'status' in value;
}

/** `host` (the destination, unless the headers name one) and the headers, each value of a list on its own line. */
function headerLines(req: ProbeRequest): Array<[string, string]> {
  const lines: Array<[string, string]> = [];
  if (!Object.keys(req.headers).some((name) => name.toLowerCase() === 'host')) lines.push(['host', req.url.host]);
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') lines.push([name, value]);
    else for (const one of value) lines.push([name, one]);
  }
  return lines;
}

function pathOf(url: URL): string {
  return `${url.pathname}${url.search}`;
}

/** The request's own deadline (client-exchange.ts) passed: the monitor's timeout. */
function isTimeout(err: unknown): boolean {
  return err instanceof ClientError && (err.code === 'ORIGIN_HEADERS_TIMEOUT' || err.code === 'ORIGIN_BODY_TIMEOUT');
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** A short, human reason for a failed connection; never includes the URL (it may carry an API key). */
export function describeTransportError(err: unknown): string {
  const refusal = targetRefusal(err);
  if (refusal !== undefined) return refusal;
  const error = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = error.code ?? error.cause?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'ORIGIN_CLOSED':
    case 'ORIGIN_CONNECT_FAILED':
      return 'connection reset by the origin';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'DNS lookup failed';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'ORIGIN_CONNECT_TIMEOUT':
      return 'connect timeout';
    case 'ORIGIN_MALFORMED_RESPONSE':
      return (error.message ?? 'malformed HTTP answer').slice(0, 200);
    default:
      if (typeof code === 'string' && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/i.test(code)) {
        return `TLS error: ${code}`;
      }
      return `request failed: ${error.message ?? String(err)}`.slice(0, 200);
  }
}

const TARGET_NOT_ALLOWED = 'target not allowed:';

/** The outbound policy's refusal in a connect error (possibly wrapped in `cause`), if any. */
function targetRefusal(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if ((current as { code?: unknown }).code === 'ETARGETREFUSED') return current.message;
    current = current.cause;
  }
  return undefined;
}
