import { Agent, type Dispatcher } from 'undici';
import { OutboundPolicy, type TargetRules } from '../../outbound/policy.js';
import { failed, type ProbeResult } from './result.js';

/**
 * The HTTP client of the monitors: undici Agents for verified TLS and for `allow_insecure`, short
 * keep-alive (a probe every few seconds reuses its socket; a dead origin still fails fast because its
 * socket closes). Every attempt has a hard deadline of the monitor's `timeout`. Bodies are read up
 * to a cap (monitors look for a substring or a small JSON answer, never more). Requests go straight to
 * the Agent's `dispatch` with a small handler (`exchange`): undici's `request()` wraps every answer in a
 * body stream read by async iteration, which was a third of the monitors' CPU at 3,000 probes a second.
 *
 * Targets: `forAccount(id)` gives the transport for one pool's account, which applies that account's
 * outbound rules (outbound/policy.ts) to every request it sends — the first URL and every redirect hop
 * before sending (literal IPs never reach a lookup), and every resolved address at connect time (each
 * kind of rules has its own Agents, whose `connect.lookup` refuses). A refused request is a failed,
 * not retried, check whose reason starts "target not allowed:". The unbound transport (`new
 * ProbeTransport()`, used only by tests that probe local servers directly) applies the rules of a
 * trusted account: local targets allowed, the always-refused set still refused. A view remembers the
 * URL checks it made (by `href`; its rules never change), so the three calls of a jsonrpc check pay for
 * one; `forAccount` makes a fresh view per round, so nothing is remembered longer than a round.
 */
export interface ProbeRequest {
  url: URL;
  method: string;
  headers: Record<string, string | string[]>;
  body?: string;
  timeoutMs: number;
  allowInsecure: boolean;
  maxBodyBytes: number;
}

export interface ProbeResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  rttMs: number;
}

/** A bound on the URL checks one view remembers (a round checks a pool's origins, at most a few hundred). */
const MAX_CHECKED_URLS = 1024;

const OPERATOR_RULES: TargetRules = { allowLocal: true, localRefusal: '', schemes: ['http:', 'https:'] };

export class ProbeTransport {
  readonly #outbound: OutboundPolicy;
  readonly #rules: TargetRules;
  /** Shared by every account's view; keyed by `allow_insecure` and the rules. */
  readonly #agents: Map<string, Agent>;
  /** URL checks this view made: href → the refusal's message, or null when allowed. */
  readonly #checked = new Map<string, string | null>();

  /**
   * `outbound`: the policy `forAccount` applies (default: one that trusts no account). `bound` is for
   * `forAccount` only: the view's rules and the Agents it shares.
   */
  constructor(
    outbound: OutboundPolicy = new OutboundPolicy({ trustedAccounts: [] }),
    bound?: { rules: TargetRules; agents: Map<string, Agent> },
  ) {
    this.#outbound = outbound;
    this.#rules = bound?.rules ?? OPERATOR_RULES;
    this.#agents = bound?.agents ?? new Map();
  }

  /** The transport for probing a pool of `accountId`: that account's outbound rules apply. */
  forAccount(accountId: string): ProbeTransport {
    return new ProbeTransport(this.#outbound, { rules: this.#outbound.rulesFor(accountId), agents: this.#agents });
  }

  #agent(allowInsecure: boolean): Agent {
    const rules = this.#rules;
    const key = `${allowInsecure}|${rules.allowLocal}|${rules.localRefusal}`;
    let agent = this.#agents.get(key);
    if (agent === undefined) {
      const lookup = this.#outbound.lookup(rules);
      agent = new Agent({
        keepAliveTimeout: 4_000,
        connections: 4,
        connect: allowInsecure ? { rejectUnauthorized: false, lookup } : { lookup },
      });
      this.#agents.set(key, agent);
    }
    return agent;
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
    const started = performance.now();
    try {
      const response = await exchange(this.#agent(req.allowInsecure), req, started);
      if (response !== TIMED_OUT) return response;
      return { ...failed(`timeout after ${formatSeconds(req.timeoutMs)}`), retryable: true, timed_out: true };
    } catch (err) {
      const reason = describeTransportError(err);
      // A refusal at connect time (a name resolving to a refused address) is not retried.
      return reason.startsWith(TARGET_NOT_ALLOWED) ? failed(reason) : { ...failed(reason), retryable: true };
    }
  }

  /** Closes the Agents of every view (call it on the transport that made them). */
  async close(): Promise<void> {
    const agents = [...this.#agents.values()];
    this.#agents.clear();
    await Promise.all(agents.map((agent) => agent.close()));
  }
}

export function isProbeResponse(value: ProbeResponse | ProbeResult): value is ProbeResponse {
  return 'status' in value;
}

const TIMED_OUT = Symbol('timed out');

/**
 * One request on undici's dispatcher with a handler of our own rather than `request()`: no body stream
 * and no async iteration per answer (with 1000 pools × 10 jsonrpc origins that is 3,000 answers a second),
 * just the chunks gathered up to `maxBodyBytes` (then the rest is cut off and what came is the body).
 * Resolves at the answer's end, with TIMED_OUT once `timeoutMs` passed (the request is aborted then,
 * or as soon as it leaves the Agent's queue), or rejects with the transport's error. `rttMs` is the time
 * to the response head.
 */
function exchange(agent: Agent, req: ProbeRequest, started: number): Promise<ProbeResponse | typeof TIMED_OUT> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    let status = 0;
    let headers: Record<string, string | string[] | undefined> = {};
    let rttMs = 0;
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = () => {
      settled = true;
      clearTimeout(timer);
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      resolve({ status, headers, body: body.subarray(0, req.maxBodyBytes).toString('utf8'), rttMs });
    };
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      controller?.abort(new Error('probe timeout'));
      resolve(TIMED_OUT);
    }, req.timeoutMs);
    try {
      dispatch(agent, req, {
        onRequestStart(ctl) {
          controller = ctl;
          if (settled) ctl.abort(new Error('probe timeout'));
        },
        onResponseStart(_ctl, statusCode, responseHeaders) {
          rttMs = Math.round(performance.now() - started);
          status = statusCode;
          headers = responseHeaders as Record<string, string | string[] | undefined>;
        },
        onResponseData(ctl, chunk) {
          if (settled) return;
          chunks.push(chunk);
          size += chunk.length;
          if (size >= req.maxBodyBytes) {
            finish();
            ctl.abort(new Error('probe body cap reached'));
          }
        },
        onResponseEnd() {
          if (!settled) finish();
        },
        onResponseError(_ctl, err) {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          reject(err);
        },
      });
    } catch (err) {
      settled = true;
      clearTimeout(timer);
      reject(err);
    }
  });
}

function dispatch(agent: Agent, req: ProbeRequest, handler: Dispatcher.DispatchHandler): void {
  agent.dispatch(
    {
      origin: req.url.origin,
      path: `${req.url.pathname}${req.url.search}`,
      method: req.method as Dispatcher.HttpMethod,
      headers: req.headers,
      body: req.body ?? null,
    },
    handler,
  );
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
    case 'UND_ERR_SOCKET':
      return 'connection reset by the origin';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'DNS lookup failed';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'connect timeout';
    default:
      if (typeof code === 'string' && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/i.test(code)) {
        return `TLS error: ${code}`;
      }
      return `request failed: ${error.message ?? String(err)}`.slice(0, 200);
  }
}

const TARGET_NOT_ALLOWED = 'target not allowed:';

/** The outbound policy's refusal in an undici error (it wraps the lookup's error), if any. */
function targetRefusal(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if ((current as { code?: unknown }).code === 'ETARGETREFUSED') return current.message;
    current = current.cause;
  }
  return undefined;
}
