/**
 * Webhook POSTs: deliveries and the test message sent when a destination is created or changed.
 *
 * Headers: `content-type: application/json`; with a secret, `cf-webhook-auth: <secret>` (Cloudflare) and
 * the Standard Webhooks signature; always `webhook-id` (the delivery's stable message id, the same on
 * every retry) and `webhook-timestamp` (this attempt, unix seconds). A 2xx answer is success; anything
 * else — 3xx (redirects are not followed), 4xx, 5xx, connection errors, a timeout of `webhooks.timeout`
 * (default 10 s) for the whole exchange — is a failure the caller may retry. Targets go through the
 * outbound policy (outbound/policy.ts) of the destination's account, with `webhooks.deny_private`:
 * the URL before connecting, and every resolved address at connect time (one undici Agent per kind of
 * rules, so a socket is never reused across accounts of different trust).
 * Error texts never contain the URL (it may carry credentials or tokens).
 */
import { Agent, request } from 'undici';
import { type OutboundPolicy, TargetRefusedError, type TargetRules } from '../outbound/policy.js';
import { signWebhook } from './signature.js';

export interface WebhookAttempt {
  /** The destination's account: its outbound rules apply. */
  accountId: string;
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

export interface WebhookClientOptions {
  outbound: OutboundPolicy;
  /** `webhooks.deny_private`: local targets refused even for trusted accounts. */
  denyPrivate: boolean;
  timeoutMs: number;
}

export class WebhookClient {
  /** One Agent per kind of rules (at most three), keyed by `rulesKey`. */
  readonly #agents = new Map<string, Agent>();
  readonly #outbound: OutboundPolicy;
  readonly #denyPrivate: boolean;
  readonly #timeoutMs: number;

  constructor(options: WebhookClientOptions) {
    this.#outbound = options.outbound;
    this.#denyPrivate = options.denyPrivate;
    this.#timeoutMs = options.timeoutMs;
  }

  /** The outbound rules for webhooks of an account. */
  rulesFor(accountId: string): TargetRules {
    return this.#outbound.rulesFor(accountId, { denyPrivate: this.#denyPrivate });
  }

  #agent(rules: TargetRules): Agent {
    const key = `${rules.allowLocal}|${rules.localRefusal}`;
    let agent = this.#agents.get(key);
    if (agent === undefined) {
      agent = new Agent({
        connect: { lookup: this.#outbound.lookup(rules), timeout: this.#timeoutMs },
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
        keepAliveTimeout: 4_000,
      });
      this.#agents.set(key, agent);
    }
    return agent;
  }

  async post(attempt: WebhookAttempt): Promise<WebhookResult> {
    const rules = this.rulesFor(attempt.accountId);
    try {
      // Literal IPs never reach the Agent's lookup: the URL check is what covers them.
      this.#outbound.checkUrl(attempt.url, rules);
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
        dispatcher: this.#agent(rules),
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
    const agents = [...this.#agents.values()];
    this.#agents.clear();
    await Promise.all(agents.map((agent) => agent.close()));
  }
}

function describe(err: unknown): { error: string; refused?: boolean } {
  let current: unknown = err;
  // undici wraps connect errors; the refusal or errno is on the cause.
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (current instanceof TargetRefusedError) return { error: current.message, refused: true };
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
