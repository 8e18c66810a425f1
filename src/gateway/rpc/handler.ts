/**
 * JSON-RPC handling of one HTTP request body for one network (after the HTTP checks of http/edge.ts): network known
 * (404) → lifecycle (410, or Deprecation/Sunset/Link headers) → parse (400 -32700; empty batch 400 -32600; batch over
 * max_batch 413 -32005) → rate limit (429) → per call: validation (-32600), method policy (-32601), params (-32602;
 * log filter sizes: log-filter-limits.ts), the logs range guard (logs-range.ts, -32005), forwarding
 * (origin-forwarder.ts). The body is parsed first (the 404/410 carry a single request's id) but its errors count only
 * after the network checks (networks: network-routes.ts).
 *
 * Single request: the origin's body with the client's raw id spliced in, HTTP 200; an error uses its
 * catalog status. A notification is forwarded and answered 204 with no body (JSON-RPC: the server must
 * not reply), even when it is refused or fails; such drops are logged.
 *
 * Batch: which calls go upstream as one batch, and when as the client wrote them: batch-upstream.ts. A
 * call it leaves out or the origin's array misses is forwarded on its own (per-call rules); answers come
 * in request order, an invalid element gets -32600 in its slot, notifications none (only notifications:
 * 204); the origin's body itself when it answers every call in order. HTTP status: batch-response.ts.
 * A WebSocket connection hands in an `RpcSession` (session.ts): its own eth_subscribe/eth_unsubscribe.
 * Before the calls run, admission.ts takes rate-limit tokens and a gateway key's quota; each admitted call of a key is
 * counted to its usage there. Each call's outcome goes to call-outcomes.ts (the per-method series, the request's trace
 * and id); the request's log lines carry its id. A config reload (SPEC §15) hands in new settings (`reconfigure`): a
 * request takes its route when it starts, so it finishes on the settings it began with.
 */
import { setMaxListeners } from 'node:events';
import type { SwitchyardError } from '../../errors/base.js';
import type { GatewayKeyRecord } from '../../model/gateway-keys.js';
import { CallAdmission } from './admission.js';
import { type BatchAnswer, batchResponse } from './batch-response.js';
import { upstreamBatch } from './batch-upstream.js';
import { type CallAnswer, callAnswer } from './call-answer.js';
import { type CallContext, upstreamRequest } from './call-context.js';
import { CallOutcomes, errorOutcome } from './call-outcomes.js';
import { asSwitchyardError } from './errors.js';
import type { ClientSignal, UpstreamRequest } from './forwarder.js';
import type { RpcHandlerOptions, RpcSettings } from './handler-options.js';
import type { HttpAnswer } from './http-answer.js';
import { splice } from './id-splice.js';
import { logsRangeRefusal } from './logs-range.js';
import { STANDARD_METHODS } from './methods.js';
import { NetworkRoutes } from './network-routes.js';
import { checkParams } from './params.js';
import { type Element, type ParsedBody, parseBody, type RpcCall } from './request.js';
import type { RequestTrace } from './request-trace.js';
import { type LocalMethods, localAnswer, type RpcSession } from './session.js';
import { batchHeaders, callHeaders } from './verified-header.js';

export class RpcHandler {
  #routes: NetworkRoutes;
  #options: RpcHandlerOptions;
  #admission: CallAdmission;
  readonly #outcomes: CallOutcomes;

  constructor(options: RpcHandlerOptions) {
    this.#options = options;
    this.#outcomes = new CallOutcomes(options.metrics, options.logger);
    this.#admission = new CallAdmission(options);
    this.#routes = new NetworkRoutes(options.networks, options.clock);
  }

  /** New settings for the requests that start from now on (see the header); the rate buckets stay. */
  reconfigure({ rateSpec, ...settings }: RpcSettings): void {
    const rateLimit = this.#options.rateLimit && { ...this.#options.rateLimit, spec: rateSpec };
    this.#options = { ...this.#options, ...settings, rateLimit };
    this.#admission = new CallAdmission(this.#options);
    this.#routes = new NetworkRoutes(settings.networks, this.#options.clock);
  }

  /**
   * The HTTP answer for one body. Returned directly when it needed no I/O (an error, a cache hit), else
   * as a promise: a cache hit then costs no promise or microtask per layer. Never rejects or throws.
   * `address` is the client's address where `client` is a key.
   */
  handle(
    network: string,
    body: Buffer,
    client: string,
    signal?: ClientSignal | (() => ClientSignal),
    session?: RpcSession,
    trace?: RequestTrace,
    address: string = client,
  ): HttpAnswer | Promise<HttpAnswer> {
    let headers: Readonly<Record<string, string>> = {};
    // An unreadable body is reported only after the network checks, so every request to a retired
    // network gets its 410 (SPEC §2) and to an unknown network its 404, whatever the body.
    let parsed: ParsedBody | undefined;
    try {
      let unreadable: unknown;
      try {
        parsed = parseBody(body, this.#options.maxBatch);
        this.#options.metrics?.calls(network, parsed.batch ? parsed.elements.length : 1);
        this.#outcomes.named(trace, parsed);
      } catch (err) {
        unreadable = err;
      }
      const route = this.#routes.get(network);
      headers = route.lifecycle.check();
      if (parsed === undefined) throw unreadable;
      const request = parsed;
      const answerHeaders = headers;
      const run = (key: GatewayKeyRecord | undefined): HttpAnswer | Promise<HttpAnswer> => {
        const context: CallContext = {
          network,
          route,
          client,
          address,
          signal: typeof signal === 'function' ? signal : () => signal,
          local: session?.local,
          stream: session?.stream ?? true,
          key,
          trace,
        };
        if (!request.batch) return this.#single(request.element, context, answerHeaders);
        return this.#batch(request, body, context, answerHeaders).catch((err: unknown) =>
          this.#outcomes.requestFailed(context, request, err, answerHeaders),
        );
      };
      const admitted = this.#admission.admit(client, parsed.batch ? parsed.elements.length : 1);
      if (!(admitted instanceof Promise)) return run(admitted);
      // The key's quota waits for its reserve in flight (quota-leased.ts); refused, or failed, as below.
      const scope = { network, trace };
      return admitted
        .then(run)
        .catch((err: unknown) => this.#outcomes.requestFailed(scope, request, err, answerHeaders));
    } catch (err) {
      return this.#outcomes.requestFailed({ network, trace }, parsed, err, headers);
    }
  }

  /** Configured and not retired: only then do keys apply (404 and 410 come first, SPEC §15). */
  serves(network: string): boolean {
    return this.#routes.find(network)?.lifecycle.retired() === false;
  }

  /** 404 unknown, 410 retired; else the network's deprecation headers (if any). */
  networkHeaders(network: string): Readonly<Record<string, string>> {
    return this.#routes.get(network).lifecycle.check();
  }

  /** A WebSocket handshake's rate-limit token (429); it is no call, so no key's quota is spent. */
  admit(client: string): void {
    this.#admission.take(client, 1);
  }

  /**
   * A subscription notification sent to `client`, priced as one call (admission.ts); throws (or, for a
   * shared quota waiting on its reserve, rejects with) KEY_QUOTA_EXCEEDED.
   */
  notification(network: string, client: string): void | Promise<void> {
    return this.#admission.notification(client, network);
  }

  /** Counts one admitted call to its key's usage (a no-op for clients without a key). */
  #count(context: CallContext, ok: boolean): void {
    this.#admission.count(context.key, context.network, ok);
  }

  /** A single call: answered at once when invalid, refused or cached; else forwarded (a promise). */
  #single(
    element: Element,
    context: CallContext,
    headers: Readonly<Record<string, string>>,
  ): HttpAnswer | Promise<HttpAnswer> {
    if (!element.ok) {
      this.#count(context, false);
      const body = this.#outcomes.errorAnswer(context, 'other', element.error, element.idBytes);
      return { status: element.error.httpStatus, body, headers };
    }
    const call = element.call;
    if (context.local?.has(call.method)) {
      const done = (answer: BatchAnswer): HttpAnswer => {
        this.#count(context, answer?.error === undefined);
        return answer === undefined
          ? { status: 204, body: undefined, headers }
          : { status: 200, headers, body: answer.body };
      };
      const answer = this.#local(call, context);
      return answer instanceof Promise ? answer.then(done) : done(answer);
    }
    const forwarder = this.#options.forwarder;
    if (forwarder.cached === undefined || call.id === undefined) return this.#forwardSingle(call, context, headers);
    try {
      const refusal = this.#refusal(call, context);
      if (refusal !== undefined) throw refusal;
      const request = upstreamRequest(call, context, true);
      const reply = forwarder.cached(request);
      if (reply !== undefined) {
        this.#count(context, reply.outcome?.key !== 'error');
        this.#outcomes.replied(context, call.method, reply);
        const answered = callHeaders(forwarder, headers, context.network, call.method, reply.verified);
        return { status: 200, headers: answered, body: splice(reply, call) };
      }
      return this.#forwardSingle(call, context, headers, request);
    } catch (err) {
      return this.#callFailed(call, err, headers, context);
    }
  }

  async #forwardSingle(
    call: RpcCall,
    context: CallContext,
    headers: Readonly<Record<string, string>>,
    checked?: UpstreamRequest,
  ): Promise<HttpAnswer> {
    let answer: CallAnswer | undefined;
    try {
      answer = await this.#call(call, context, true, checked);
    } catch (err) {
      return this.#callFailed(call, err, headers, context);
    }
    this.#count(context, answer?.failed !== true);
    if (answer === undefined) return { status: 204, body: undefined, headers };
    const answered = callHeaders(this.#options.forwarder, headers, context.network, call.method, answer.verified);
    if (answer.rest === undefined) return { status: 200, headers: answered, body: answer.body };
    const { body, rest, length } = answer;
    return { status: 200, headers: answered, body, rest, ...(length === undefined ? {} : { length }) };
  }

  /** A single call's error answer (204 for a notification: nobody may be answered). */
  #callFailed(
    call: RpcCall,
    err: unknown,
    headers: Readonly<Record<string, string>>,
    context: CallContext,
  ): HttpAnswer {
    this.#count(context, call.id === undefined);
    const error = asSwitchyardError(err, this.#outcomes.logger(context));
    if (call.id === undefined) {
      this.#outcomes.settled(context, call.method, errorOutcome(error));
      return { status: 204, body: undefined, headers };
    }
    return {
      status: error.httpStatus,
      body: this.#outcomes.errorAnswer(context, call.method, error, call.idBytes),
      headers: { ...callHeaders(this.#options.forwarder, headers, context.network, call.method), ...error.headers },
    };
  }

  async #batch(
    { elements, plainIds }: Extract<ParsedBody, { batch: true }>,
    body: Buffer,
    context: CallContext,
    headers: Readonly<Record<string, string>>,
  ): Promise<HttpAnswer> {
    // Each forwarded call of the batch listens to the client's signal (up to gateway.max_batch): no leak.
    const signal = context.signal();
    if (signal instanceof EventTarget && elements.length > 10) setMaxListeners(elements.length, signal);
    // The upstream batch is awaited once; its answers are placed synchronously, and only the calls it
    // did not answer run as async per-call forwards (no async closure per element of a large batch).
    const { network, route } = context;
    const eligible = (call: RpcCall) => this.#batchable(call, context);
    const input = { network, pools: route.pools, elements, plainIds, body, signal, eligible, trace: context.trace };
    const grouped = upstreamBatch(this.#options.forwarder, input);
    const result = grouped === undefined ? undefined : await grouped;
    if (result?.whole !== undefined) {
      // The origin's body answers every call, in order, with the client's own ids: it is the answer.
      this.#outcomes.whole(context, elements, result, (ok) => {
        if (context.key !== undefined) this.#count(context, ok);
      });
      return { status: 200, body: result.whole, headers: batchHeaders(this.#options, network, headers, elements) };
    }
    const outcomes = result?.outcomes;
    const answers = await Promise.all(
      elements.map((element, index): BatchAnswer | Promise<BatchAnswer> => {
        if (!element.ok) return this.#outcomes.errorElement(context, 'other', element.error, element.idBytes);
        const call = element.call;
        if (context.local?.has(call.method)) return this.#local(call, context);
        const outcome = outcomes?.[index];
        if (outcome === undefined) return this.#batchCall(call, context);
        if ('error' in outcome) return this.#batchFailure(call, context, outcome.error);
        const failed = 'reply' in outcome && outcome.reply.outcome?.key === 'error';
        this.#outcomes.settled(context, call.method, failed ? 'error_answer' : 'ok');
        if ('sent' in outcome || call.id === undefined) return undefined;
        const { reply } = outcome;
        return { body: reply.body, id: reply.id, clientId: call.idBytes, failed };
      }),
    );
    if (context.key !== undefined) {
      for (const answer of answers) this.#count(context, answer === undefined || (!answer.error && !answer.failed));
    }
    return { ...batchResponse(answers), headers: batchHeaders(this.#options, network, headers, elements, answers) };
  }

  /** A call the connection answers itself (session.ts): its answer, its error answer, or nothing. */
  #local(call: RpcCall, context: CallContext): BatchAnswer | Promise<BatchAnswer> {
    // A failure is counted by #batchFailure; a success here.
    let failed = false;
    const fail = (err: unknown) => {
      failed = true;
      return this.#batchFailure(call, context, err);
    };
    const settle = (answer: BatchAnswer): BatchAnswer => {
      if (!failed) this.#outcomes.settled(context, call.method, 'ok');
      return answer;
    };
    const answer = localAnswer(call, context.network, context.route.policy, context.local as LocalMethods, fail);
    return answer instanceof Promise ? answer.then(settle) : settle(answer);
  }

  /** A call of a batch forwarded on its own; its failure becomes its element's error answer. */
  async #batchCall(call: RpcCall, context: CallContext): Promise<BatchAnswer> {
    try {
      const answer = await this.#call(call, context, false);
      return answer === undefined ? undefined : { ...answer, failed: answer.failed === true };
    } catch (err) {
      return this.#batchFailure(call, context, err);
    }
  }

  /** The element answer of a batch call that failed (nothing for a notification: it is only logged). */
  #batchFailure(call: RpcCall, context: CallContext, err: unknown): BatchAnswer {
    if (call.id === undefined) return this.#outcomes.undelivered(context, call.method, err);
    const error = asSwitchyardError(err, this.#outcomes.logger(context));
    return this.#outcomes.errorElement(context, call.method, error, call.idBytes);
  }

  /** May join an upstream batch: not the connection's own, no filter call (filter-affinity.ts), not refused. */
  #batchable(call: RpcCall, context: CallContext): boolean {
    if (context.local?.has(call.method) === true || STANDARD_METHODS[call.method]?.filter !== undefined) return false;
    return this.#refusal(call, context) === undefined;
  }

  /** Why the network refuses this call (method policy, then params, then the logs range guard), if it does. */
  #refusal(call: RpcCall, context: CallContext): SwitchyardError | undefined {
    const refusal =
      context.route.policy.check(call.method) ?? checkParams(call.method, call.params, this.#options.filterLimits);
    if (refusal !== undefined) return refusal;
    return logsRangeRefusal(context.network, call.method, call.params, context.route.maxLogsRange, this.#options.chain);
  }

  /**
   * One call: policy, params, forward (`checked`: the request of a call already checked). Returns the
   * client's answer bytes (for a single request a large answer may come as its first bytes plus a
   * stream of the rest), or undefined for a notification. Throws a SwitchyardError for the call's error.
   */
  async #call(
    call: RpcCall,
    context: CallContext,
    stream: boolean,
    checked?: UpstreamRequest,
  ): Promise<CallAnswer | undefined> {
    const refusal = checked === undefined ? this.#refusal(call, context) : undefined;
    if (refusal !== undefined) {
      if (call.id === undefined) {
        this.#outcomes.settled(context, call.method, 'refused');
        this.#outcomes.logger(context).debug('notification dropped', {
          network: context.network,
          method: call.method,
          reason: refusal.message,
        });
        return undefined;
      }
      throw refusal;
    }
    try {
      const reply = await this.#options.forwarder.forward(checked ?? upstreamRequest(call, context, stream));
      this.#outcomes.replied(context, call.method, reply);
      return callAnswer(call, reply);
    } catch (err) {
      if (call.id === undefined) return this.#outcomes.undelivered(context, call.method, err);
      throw err;
    }
  }
}
