import { Agent, type Dispatcher, request } from 'undici';
import { failed, type ProbeResult } from './result.js';

/**
 * The HTTP client of the monitors: one undici Agent for verified TLS and one for `allow_insecure`,
 * short keep-alive (a probe every few seconds reuses its socket; a dead origin still fails fast because
 * its socket closes). Every attempt has a hard deadline of the monitor's `timeout`. Bodies are read up
 * to a cap (monitors look for a substring or a small JSON answer, never more).
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

export class ProbeTransport {
  #secure = new Agent({ keepAliveTimeout: 4_000, connections: 4 });
  #insecure = new Agent({ keepAliveTimeout: 4_000, connections: 4, connect: { rejectUnauthorized: false } });

  /** One attempt: a response, or a failed ProbeResult saying why none arrived. */
  async send(req: ProbeRequest): Promise<ProbeResponse | ProbeResult> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, req.timeoutMs);
    const started = performance.now();
    try {
      const dispatcher: Dispatcher = req.allowInsecure ? this.#insecure : this.#secure;
      const response = await request(req.url, {
        method: req.method as Dispatcher.HttpMethod,
        headers: req.headers,
        body: req.body,
        signal: controller.signal,
        dispatcher,
      });
      const rttMs = Math.round(performance.now() - started);
      const body = await readCapped(response.body, req.maxBodyBytes);
      return { status: response.statusCode, headers: response.headers, body, rttMs };
    } catch (err) {
      if (timedOut) {
        return { ...failed(`timeout after ${formatSeconds(req.timeoutMs)}`), retryable: true, timed_out: true };
      }
      return { ...failed(describeTransportError(err)), retryable: true };
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.#secure.close(), this.#insecure.close()]);
  }
}

export function isProbeResponse(value: ProbeResponse | ProbeResult): value is ProbeResponse {
  return 'status' in value;
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, cap: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= cap) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, cap).toString('utf8');
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** A short, human reason for a failed connection; never includes the URL (it may carry an API key). */
export function describeTransportError(err: unknown): string {
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
