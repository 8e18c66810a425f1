/**
 * JSON-RPC handling of one HTTP request body for one network (after server.ts's HTTP checks):
 *   network known (404) → lifecycle (410, or Deprecation/Sunset/Link headers) → parse (400 -32700;
 *   empty batch 400 -32600; batch over max_batch 413 -32005) → rate limit (429) → per call: validation
 *   (-32600), method policy (-32601), params (-32602), forwarding (forward.ts). The body is parsed
 *   first (the 404/410 carry a single request's id) but its errors count only after the network checks.
 *
 * Single request: the origin's body with the client's raw id spliced in, HTTP 200; an error uses its
 * catalog status. A notification is forwarded and answered 204 with no body (JSON-RPC: the server must
 * not reply), even when it is refused or fails; such drops are logged.
 *
 * Batch: every call is forwarded on its own, concurrently (per-call failover and retry rules; origins'
 * batch limits do not matter), and the answers are returned in request order. An invalid element gets
 * a -32600 error in its slot; notifications get no element; a batch of only notifications gets 204.
 * The batch's HTTP status is 200, except when every answer is an upstream error (503/502/504): then
 * the status of the first.
 */
import { setMaxListeners } from 'node:events';
import type { Readable } from 'node:stream';
import type { Clock } from '../clock.js';
import type { NetworkConfig } from '../config/schema.js';
import { SwitchyardError } from '../errors/base.js';
import type { Logger } from '../log.js';
import type { Forwarder } from './forward.js';
import { NetworkLifecycle } from './lifecycle.js';
import type { GatewayMetrics } from './metrics.js';
import { checkParams } from './params.js';
import { MethodPolicy } from './policy.js';
import type { RateLimiter } from './rate-limit.js';
import { type Element, type ParsedBody, parseBody, type RpcCall } from './request.js';
import { asSwitchyardError, errorResponse } from './respond.js';

export interface HttpAnswer {
  status: number;
  /** The answer; with `rest`, its first bytes (the client's id already in place). */
  body: Buffer | undefined;
  headers: Readonly<Record<string, string>>;
  /** A large single answer still arriving from the origin (forward.ts, streaming): send after `body`. */
  rest?: Readable;
  /** Total length of `body` + `rest`, when the origin announced its length. */
  length?: number;
}

/** One call's answer for the client: whole, or its first bytes and a stream of the rest. */
interface CallAnswer {
  body: Buffer;
  rest?: Readable;
  length?: number;
}

interface NetworkRoute {
  readonly pools: readonly string[];
  readonly lifecycle: NetworkLifecycle;
  readonly policy: MethodPolicy;
}

export interface RpcHandlerOptions {
  networks: Readonly<Record<string, NetworkConfig>>;
  forwarder: Forwarder;
  clock: Clock;
  logger: Logger;
  maxBatch: number;
  rateLimiter?: RateLimiter | undefined;
  metrics?: GatewayMetrics | undefined;
}

interface CallContext {
  network: string;
  route: NetworkRoute;
  /** The client's abort signal, created only when something asks for it (cache hits never do). */
  signal: () => AbortSignal | undefined;
}

const UPSTREAM_CODES = new Set(['NO_HEALTHY_ORIGIN', 'UPSTREAM_FAILED', 'UPSTREAM_TIMEOUT']);
const COMMA = Buffer.from(',');

export class RpcHandler {
  readonly #routes = new Map<string, NetworkRoute>();
  readonly #options: RpcHandlerOptions;

  constructor(options: RpcHandlerOptions) {
    this.#options = options;
    for (const [name, network] of Object.entries(options.networks)) {
      this.#routes.set(name, {
        pools: network.pools,
        lifecycle: new NetworkLifecycle(name, network, options.clock),
        policy: new MethodPolicy(name, network.allow_methods, network.deny_methods),
      });
    }
  }

  async handle(
    network: string,
    body: Buffer,
    client: string,
    signal?: AbortSignal | (() => AbortSignal),
  ): Promise<HttpAnswer> {
    let headers: Readonly<Record<string, string>> = {};
    let wholeId: Buffer | undefined;
    try {
      // An unreadable body is reported only after the network checks, so every request to a retired
      // network gets its 410 (SPEC §2) and to an unknown network its 404, whatever the body.
      let parsed: ParsedBody | undefined;
      let unreadable: unknown;
      try {
        parsed = parseBody(body, this.#options.maxBatch);
        this.#options.metrics?.calls(network, parsed.batch ? parsed.elements.length : 1);
        if (!parsed.batch) wholeId = parsed.element.ok ? parsed.element.call.idBytes : parsed.element.idBytes;
      } catch (err) {
        unreadable = err;
      }
      const route = this.#routes.get(network);
      if (route === undefined) {
        const known = [...this.#routes.keys()].map((name) => `/v1/${name}`).join(', ');
        throw new SwitchyardError(
          'NETWORK_UNKNOWN',
          `Unknown network "${network}"; configured networks: ${known || '(none)'}.`,
          { details: { network } },
        );
      }
      headers = route.lifecycle.check();
      if (parsed === undefined) throw unreadable;
      this.#options.rateLimiter?.take(client, parsed.batch ? parsed.elements.length : 1);
      const context: CallContext = { network, route, signal: typeof signal === 'function' ? signal : () => signal };
      if (!parsed.batch) return await this.#single(parsed.element, context, headers);
      return await this.#batch(parsed.elements, context, headers);
    } catch (err) {
      const error = asSwitchyardError(err);
      if (error.code === 'GATEWAY_INTERNAL') this.#options.logger.error('gateway request failed', { err });
      return {
        status: error.httpStatus,
        body: errorResponse(error, wholeId),
        headers: { ...headers, ...error.headers },
      };
    }
  }

  async #single(
    element: Element,
    context: CallContext,
    headers: Readonly<Record<string, string>>,
  ): Promise<HttpAnswer> {
    if (!element.ok)
      return { status: element.error.httpStatus, body: errorResponse(element.error, element.idBytes), headers };
    const call = element.call;
    try {
      const answer = await this.#call(call, context, true);
      if (answer === undefined) return { status: 204, body: undefined, headers };
      if (answer.rest === undefined) return { status: 200, headers, body: answer.body };
      return { status: 200, headers, ...answer };
    } catch (err) {
      const error = asSwitchyardError(err);
      if (call.id === undefined) return { status: 204, body: undefined, headers };
      return {
        status: error.httpStatus,
        body: errorResponse(error, call.idBytes),
        headers: { ...headers, ...error.headers },
      };
    }
  }

  async #batch(
    elements: Element[],
    context: CallContext,
    headers: Readonly<Record<string, string>>,
  ): Promise<HttpAnswer> {
    // Each forwarded call of the batch listens to the client's signal (up to gateway.max_batch): no leak.
    const signal = context.signal();
    if (signal !== undefined && elements.length > 10) setMaxListeners(elements.length, signal);
    const answers = await Promise.all(
      elements.map(async (element): Promise<{ body: Buffer; error?: SwitchyardError } | undefined> => {
        if (!element.ok) return { body: errorResponse(element.error, element.idBytes), error: element.error };
        try {
          const answer = await this.#call(element.call, context, false);
          return answer === undefined ? undefined : { body: answer.body };
        } catch (err) {
          if (element.call.id === undefined) return undefined;
          const error = asSwitchyardError(err);
          return { body: errorResponse(error, element.call.idBytes), error };
        }
      }),
    );
    const present = answers.filter((answer) => answer !== undefined);
    if (present.length === 0) return { status: 204, body: undefined, headers };
    const parts: Buffer[] = [Buffer.from('[')];
    present.forEach((answer, i) => {
      if (i > 0) parts.push(COMMA);
      parts.push(answer.body);
    });
    parts.push(Buffer.from(']'));
    const first = present[0]?.error;
    const allUpstream = present.every((answer) => answer.error !== undefined && UPSTREAM_CODES.has(answer.error.code));
    return { status: allUpstream && first ? first.httpStatus : 200, body: Buffer.concat(parts), headers };
  }

  /**
   * One call: policy, params, forward. Returns the client's answer bytes (for a single request a large
   * answer may come as its first bytes plus a stream of the rest), or undefined for a notification.
   * Throws a SwitchyardError for the call's error answer.
   */
  async #call(call: RpcCall, context: CallContext, stream: boolean): Promise<CallAnswer | undefined> {
    const refusal = context.route.policy.check(call.method) ?? checkParams(call.method, call.params);
    if (refusal !== undefined) {
      if (call.id === undefined) {
        this.#options.logger.debug('notification dropped', {
          network: context.network,
          method: call.method,
          reason: refusal.message,
        });
        return undefined;
      }
      throw refusal;
    }
    try {
      const lazySignal = context.signal;
      const reply = await this.#options.forwarder.forward({
        network: context.network,
        pools: context.route.pools,
        call,
        stream,
        get signal() {
          return lazySignal();
        },
      });
      if (call.id === undefined || reply.id === undefined) {
        reply.rest?.destroy();
        return undefined;
      }
      const body = Buffer.concat([
        reply.body.subarray(0, reply.id.start),
        call.idBytes,
        reply.body.subarray(reply.id.end),
      ]);
      if (reply.rest === undefined) return { body };
      if (reply.length === undefined) return { body, rest: reply.rest };
      const length = reply.length - (reply.id.end - reply.id.start) + call.idBytes.length;
      return { body, rest: reply.rest, length };
    } catch (err) {
      if (call.id === undefined) {
        this.#options.logger.info('notification not delivered', {
          network: context.network,
          method: call.method,
          reason: (err as Error).message,
        });
        return undefined;
      }
      throw err;
    }
  }
}
