/**
 * What the handler (handler.ts) reports of each call (SPEC §16): its count in
 * `switchyard_rpc_requests_total` (gateway/rpc-metrics.ts: `ok`, `error_answer`, `refused` for a 4xx
 * gateway error, `failed` for a 5xx one), and to the request's trace (request-trace.ts) the calls' names
 * and the codes of the errors the gateway answered, whose bodies quote the request id in
 * `error.data.request_id` (errors.ts). Each call counts once: an error where it becomes an answer (or,
 * for a notification, where it is dropped), an answer where it arrives; a request refused as a whole
 * counts each of its calls (an unreadable body as one `other`). Lines about a request go to its
 * trace's logger (with its id), else the handler's.
 */
import { isSwitchyardError, type SwitchyardError } from '../../errors/base.js';
import type { Logger } from '../../log.js';
import type { GatewayMetrics } from '../metrics.js';
import type { CallOutcome } from '../rpc-metrics.js';
import type { BatchAnswer } from './batch-response.js';
import { asSwitchyardError, errorResponse } from './errors.js';
import type { BatchOutcome, BatchResult } from './forwarder.js';
import type { HttpAnswer } from './http-answer.js';
import type { Element, ParsedBody } from './request.js';
import type { RequestTrace } from './request-trace.js';

/** Where a call belongs: its network and its request's trace (none for calls made without one). */
export interface CallScope {
  readonly network: string;
  readonly trace: RequestTrace | undefined;
}

export class CallOutcomes {
  readonly #metrics: GatewayMetrics | undefined;
  readonly #logger: Logger;

  constructor(metrics: GatewayMetrics | undefined, logger: Logger) {
    this.#metrics = metrics;
    this.#logger = logger;
  }

  /** The logger of the request's lines (with its id), else the handler's. */
  logger(scope: CallScope): Logger {
    return scope.trace?.logger ?? this.#logger;
  }

  /** The request's calls, named to its trace in request order (an invalid element as `other`). */
  named(trace: RequestTrace | undefined, parsed: ParsedBody): void {
    if (trace === undefined) return;
    for (const element of elementsOf(parsed)) trace.method(element.ok ? element.call.method : 'other');
  }

  /** One call's outcome; `answered`: a gateway error that is in the answer (its code goes to the trace). */
  settled(scope: CallScope, method: string, outcome: CallOutcome, answered?: SwitchyardError): void {
    this.#metrics?.rpcCall(scope.network, method, outcome);
    if (answered !== undefined) scope.trace?.error(answered.spec.rpc ?? -32603);
  }

  /** A call answered `ok` or with the origin's own error. */
  replied(scope: CallScope, method: string, reply: { readonly outcome?: { readonly key: string } | undefined }): void {
    this.settled(scope, method, reply.outcome?.key === 'error' ? 'error_answer' : 'ok');
  }

  /** The error answer of one call, counted. */
  errorAnswer(scope: CallScope, method: string, error: SwitchyardError, id: Buffer): Buffer {
    this.settled(scope, method, errorOutcome(error), error);
    return errorResponse(error, id, scope.trace?.id);
  }

  /** A batch element's error answer, counted. */
  errorElement(scope: CallScope, method: string, error: SwitchyardError, id: Buffer): BatchAnswer {
    return { body: this.errorAnswer(scope, method, error, id), error };
  }

  /** The error answer of a whole request; each of its calls counts with it. */
  requestFailed(
    scope: CallScope,
    parsed: ParsedBody | undefined,
    err: unknown,
    headers: Readonly<Record<string, string>>,
  ): HttpAnswer {
    const error = asSwitchyardError(err, this.logger(scope));
    const outcome = errorOutcome(error);
    const elements = parsed === undefined ? [undefined] : elementsOf(parsed);
    for (const element of elements) this.settled(scope, element?.ok ? element.call.method : 'other', outcome);
    scope.trace?.error(error.spec.rpc ?? -32603);
    const body = errorResponse(error, idOf(parsed), scope.trace?.id);
    return { status: error.httpStatus, body, headers: { ...headers, ...error.headers } };
  }

  /** A notification whose forwarding failed: nobody may be answered (JSON-RPC), so it is only logged. */
  undelivered(scope: CallScope, method: string, err: unknown): undefined {
    this.settled(scope, method, errorOutcome(err));
    this.logger(scope).info('notification not delivered', { network: scope.network, method, err });
    return undefined;
  }

  /** A batch an origin answered whole: each call by its answer; `each` hears whether it was a result. */
  whole(scope: CallScope, elements: readonly Element[], result: BatchResult, each: (ok: boolean) => void): void {
    for (let index = 0; index < elements.length; index += 1) {
      const ok = result.resultAt?.(index) ?? isResult(result.outcomes[index]);
      each(ok);
      const element = elements[index] as Element;
      this.settled(scope, element.ok ? element.call.method : 'other', ok ? 'ok' : 'error_answer');
    }
  }
}

function isResult(outcome: BatchOutcome): boolean {
  return outcome !== undefined && 'reply' in outcome && outcome.reply.outcome?.key !== 'error';
}

/** A gateway error as a call's outcome: a 5xx is the gateway failing the call, anything else refusing it. */
export function errorOutcome(err: unknown): CallOutcome {
  return isSwitchyardError(err) && err.httpStatus < 500 ? 'refused' : 'failed';
}

function elementsOf(parsed: ParsedBody): readonly Element[] {
  return parsed.batch ? parsed.elements : [parsed.element];
}

/** A single request's id, for its error answer (read only then: most requests never need it). */
function idOf(parsed: ParsedBody | undefined): Buffer | undefined {
  const element = parsed?.batch === false ? parsed.element : undefined;
  return element === undefined ? undefined : element.ok ? element.call.idBytes : element.idBytes;
}
