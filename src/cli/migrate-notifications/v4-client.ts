/**
 * A small Cloudflare v4 API client for the migration tool, over the global `fetch`.
 *
 * Behaviour:
 * - Sends `Authorization: Bearer <token>` and JSON bodies; unwraps the v4 envelope to `{result, resultInfo}`.
 * - Any answer that is not a successful envelope becomes a `V4ApiError` whose message carries the v4 code(s)
 *   and the HTTP status, e.g. `API error 10000: Authentication error (HTTP 403)`.
 * - Retries politely: HTTP 429 and 5xx, timeouts and connection errors are retried up to `retries` times
 *   (default 4) with exponential back-off starting at 500 ms, doubling, capped at 8 s; a `Retry-After`
 *   header (seconds or HTTP date, capped at 60 s) wins over the computed delay.
 *   Non-idempotent calls (POST) are retried only when the server certainly did not act on them: HTTP 429
 *   or a refused connection. A POST that timed out or got a 5xx may have been applied, so it fails with
 *   `maybeApplied = true` and the caller decides (the executor looks for its marker before trying again).
 * - Each attempt has a timeout (default 30 s).
 * The token is never part of an error message or log line.
 */
import type { Clock } from '../../clock.js';
import { systemClock } from '../../clock.js';

export interface V4ResultInfo {
  page?: number;
  per_page?: number;
  count?: number;
  total_count?: number;
  total_pages?: number;
}

export interface V4Response<T> {
  result: T;
  resultInfo: V4ResultInfo | undefined;
}

export interface V4ErrorItem {
  code: number;
  message: string;
}

export class V4ApiError extends Error {
  override readonly name = 'V4ApiError';
  readonly status: number | undefined;
  readonly errors: readonly V4ErrorItem[];
  /** True when the request may have taken effect although it failed (POST timeout or 5xx). */
  readonly maybeApplied: boolean;

  constructor(
    message: string,
    options: { status?: number; errors?: V4ErrorItem[]; maybeApplied?: boolean; cause?: unknown },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status;
    this.errors = options.errors ?? [];
    this.maybeApplied = options.maybeApplied ?? false;
  }

  /** The first v4 error code, if the server sent one. */
  get code(): number | undefined {
    return this.errors[0]?.code;
  }
}

export interface V4ClientOptions {
  /** e.g. `http://127.0.0.1:8787/client/v4` or `https://api.cloudflare.com/client/v4`. */
  baseUrl: string;
  token: string;
  fetch?: typeof fetch;
  clock?: Clock;
  /** How to wait between attempts; tests pass one that records the delay and returns at once. */
  sleep?: (ms: number) => Promise<void>;
  retries?: number;
  timeoutMs?: number;
}

export type Query = Record<string, string | number | undefined>;

export interface CallOptions {
  query?: Query;
  body?: unknown;
}

const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;
const MAX_RETRY_AFTER_MS = 60_000;

export class V4Client {
  readonly baseUrl: string;
  #token: string;
  #fetch: typeof fetch;
  #clock: Clock;
  #sleep: (ms: number) => Promise<void>;
  #retries: number;
  #timeoutMs: number;

  constructor(options: V4ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#token = options.token;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#clock = options.clock ?? systemClock;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#retries = options.retries ?? 4;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  get<T>(path: string, query?: Query): Promise<V4Response<T>> {
    return this.call<T>('GET', path, { query });
  }

  post<T>(path: string, body: unknown): Promise<V4Response<T>> {
    return this.call<T>('POST', path, { body });
  }

  put<T>(path: string, body: unknown): Promise<V4Response<T>> {
    return this.call<T>('PUT', path, { body });
  }

  patch<T>(path: string, body: unknown, query?: Query): Promise<V4Response<T>> {
    return this.call<T>('PATCH', path, { body, query });
  }

  async call<T>(method: string, path: string, options: CallOptions = {}): Promise<V4Response<T>> {
    const url = this.#url(path, options.query);
    const idempotent = method !== 'POST';
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.#attempt<T>(method, url, options.body, idempotent);
      if (outcome.ok) return outcome.response;
      const { error, retryable, retryAfterMs } = outcome;
      if (!retryable || attempt >= this.#retries) throw error;
      await this.#sleep(retryAfterMs ?? Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt));
    }
  }

  #url(path: string, query: Query | undefined): string {
    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url.toString();
  }

  async #attempt<T>(
    method: string,
    url: string,
    body: unknown,
    idempotent: boolean,
  ): Promise<
    { ok: true; response: V4Response<T> } | { ok: false; error: V4ApiError; retryable: boolean; retryAfterMs?: number }
  > {
    const where = `${method} ${new URL(url).pathname}`;
    let response: Response;
    try {
      response = await this.#fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.#token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      const refused = connectionRefused(err);
      const reason = describeFetchError(err);
      return {
        ok: false,
        retryable: idempotent || refused,
        error: new V4ApiError(`cannot reach the API (${where}): ${reason}`, { maybeApplied: !refused, cause: err }),
      };
    }
    let text: string;
    try {
      text = await response.text();
    } catch (err) {
      return {
        ok: false,
        retryable: idempotent,
        error: new V4ApiError(`${where}: the connection broke while reading the answer (HTTP ${response.status})`, {
          status: response.status,
          maybeApplied: true,
          cause: err,
        }),
      };
    }
    const envelope = parseEnvelope(text);
    const status = response.status;
    if (envelope !== undefined && envelope.success === true && status < 400) {
      return { ok: true, response: { result: envelope.result as T, resultInfo: envelope.result_info } };
    }
    const errors = envelope?.errors ?? [];
    const detail =
      errors.length > 0
        ? errors.map((e) => `${e.code}: ${e.message}`).join('; ')
        : envelope === undefined
          ? `unexpected answer that is not a v4 envelope: ${text.slice(0, 120).replace(/\s+/g, ' ')}`
          : 'request failed without an error message';
    const transient = status === 429 || status >= 500;
    return {
      ok: false,
      retryable: transient && (idempotent || status === 429),
      retryAfterMs: transient ? this.#retryAfter(response.headers.get('retry-after')) : undefined,
      error: new V4ApiError(`API error ${detail} (HTTP ${status}) on ${where}`, {
        status,
        errors,
        maybeApplied: !idempotent && status >= 500,
      }),
    };
  }

  #retryAfter(header: string | null): number | undefined {
    if (header === null || header.trim() === '') return undefined;
    const seconds = Number(header);
    const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - this.#clock.now();
    if (!Number.isFinite(ms)) return undefined;
    return Math.max(0, Math.min(MAX_RETRY_AFTER_MS, ms));
  }
}

interface Envelope {
  success: unknown;
  errors?: V4ErrorItem[];
  result?: unknown;
  result_info?: V4ResultInfo;
}

function parseEnvelope(text: string): Envelope | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || !('success' in value)) return undefined;
  const raw = value as Record<string, unknown>;
  const errors = Array.isArray(raw.errors)
    ? raw.errors
        .filter((e): e is Record<string, unknown> => e !== null && typeof e === 'object')
        .map((e) => ({ code: Number(e.code), message: String(e.message ?? '') }))
    : [];
  const info = raw.result_info;
  return {
    success: raw.success,
    errors,
    result: raw.result,
    result_info: info !== null && typeof info === 'object' ? (info as V4ResultInfo) : undefined,
  };
}

function connectionRefused(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  return cause?.code === 'ECONNREFUSED';
}

function describeFetchError(err: unknown): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return 'timed out';
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (cause !== undefined && cause !== null) {
    return typeof cause.code === 'string' ? cause.code : String(cause.message ?? err);
  }
  return err instanceof Error ? err.message : String(err);
}
