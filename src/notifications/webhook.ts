/**
 * Webhook POSTs: deliveries and the test message sent when a destination is created or changed.
 *
 * Headers: `content-type: application/json`; with a secret, `cf-webhook-auth: <secret>` (Cloudflare) and
 * the Standard Webhooks signature; always `webhook-id` (the delivery's stable message id, the same on
 * every retry) and `webhook-timestamp` (this attempt, unix seconds). A 2xx answer is success; anything
 * else — 3xx (redirects are not followed), 4xx, 5xx, connection errors, a timeout of `webhooks.timeout`
 * (default 10 s) for the whole exchange — is a failure the caller may retry. Targets are checked by
 * `target-safety.ts` before connecting and on every resolved address.
 * Error texts never contain the URL (it may carry credentials or tokens).
 */
import { Agent, request } from 'undici';
import { signWebhook } from './signature.js';
import { checkWebhookUrl, guardedLookup, type TargetPolicy, TargetRefusedError } from './target-safety.js';

export interface WebhookAttempt {
  url: string;
  body: string;
  messageId: string;
  secret: string | null;
  /** Unix seconds of this attempt. */
  timestamp: number;
}

export type WebhookResult =
  | { ok: true; status: number }
  | { ok: false; status?: number; error: string; refused?: boolean; retryAfterMs?: number };

export interface WebhookClientOptions extends TargetPolicy {
  timeoutMs: number;
}

export class WebhookClient {
  readonly #agent: Agent;
  readonly #policy: TargetPolicy;
  readonly #timeoutMs: number;

  constructor(options: WebhookClientOptions) {
    this.#policy = { denyPrivate: options.denyPrivate };
    this.#timeoutMs = options.timeoutMs;
    this.#agent = new Agent({
      connect: { lookup: guardedLookup(this.#policy), timeout: options.timeoutMs },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      keepAliveTimeout: 4_000,
    });
  }

  get policy(): TargetPolicy {
    return this.#policy;
  }

  async post(attempt: WebhookAttempt): Promise<WebhookResult> {
    try {
      checkWebhookUrl(attempt.url, this.#policy);
    } catch (err) {
      return { ok: false, refused: true, error: (err as Error).message };
    }
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Switchyard-Webhooks/1',
      'webhook-id': attempt.messageId,
      'webhook-timestamp': String(attempt.timestamp),
    };
    if (attempt.secret !== null && attempt.secret !== '') {
      headers['cf-webhook-auth'] = attempt.secret;
      headers['webhook-signature'] = signWebhook(attempt.messageId, attempt.timestamp, attempt.body, attempt.secret);
    }
    try {
      const response = await request(attempt.url, {
        method: 'POST',
        headers,
        body: attempt.body,
        dispatcher: this.#agent,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      await response.body.dump();
      if (response.statusCode >= 200 && response.statusCode < 300) return { ok: true, status: response.statusCode };
      const retryAfter = Number(response.headers['retry-after']);
      return {
        ok: false,
        status: response.statusCode,
        error: `HTTP ${response.statusCode}`,
        ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
      };
    } catch (err) {
      return { ok: false, ...describe(err) };
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

function describe(err: unknown): { error: string; refused?: boolean } {
  let current: unknown = err;
  // undici wraps connect errors; the refusal or errno is on the cause.
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (current instanceof TargetRefusedError) return { error: `refused: ${current.message}`, refused: true };
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR') {
      if (current.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
        return { error: 'timeout' };
      }
      return { error: code };
    }
    if (current.name === 'TimeoutError' || current.name === 'AbortError') return { error: 'timeout' };
    current = current.cause;
  }
  return { error: err instanceof Error ? err.name : 'request failed' };
}
