/**
 * HTTP clients for origins: one undici Pool per origin (scheme://host:port), keeping up to
 * `gateway.connections_per_origin` keep-alive sockets (idle sockets close after 30 s). An origin's
 * address may carry a path and query (provider keys) and user:password (sent as Basic auth); its
 * `header` map is added to every request. Pools of origins that left the directory are closed by `prune`.
 */
import { Readable } from 'node:stream';
import { type Dispatcher, Pool } from 'undici';
import type { Origin } from '../balancing/model.js';
import { originUrl } from '../balancing/origin-url.js';

export interface OriginTarget {
  readonly pool: Pool;
  /** Path and query to POST to. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface OriginClientsOptions {
  connectionsPerOrigin: number;
  /** Connect timeout (ms). */
  connectTimeoutMs: number;
}

export class OriginClients {
  readonly #options: OriginClientsOptions;
  readonly #pools = new Map<string, Pool>();
  readonly #targets = new Map<string, { target: OriginTarget; origin: Origin }>();

  constructor(options: OriginClientsOptions) {
    this.#options = options;
  }

  /** The client for an origin; created on first use. Throws a TypeError for an unusable address. */
  target(origin: Origin): OriginTarget {
    const cached = this.#targets.get(origin.address);
    if (cached !== undefined && cached.origin.header === origin.header) return cached.target;
    const url = originUrl(origin.address);
    const key = `${url.protocol}//${url.host}`;
    let pool = this.#pools.get(key);
    if (pool === undefined) {
      pool = new Pool(key, {
        connections: this.#options.connectionsPerOrigin,
        keepAliveTimeout: 30_000,
        connect: { timeout: this.#options.connectTimeoutMs },
      });
      this.#pools.set(key, pool);
    }
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    for (const [name, values] of Object.entries(origin.header)) headers[name.toLowerCase()] = values.join(', ');
    if (url.username !== '' || url.password !== '') {
      const user = decodeURIComponent(url.username);
      const password = decodeURIComponent(url.password);
      headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    }
    const target: OriginTarget = { pool, path: `${url.pathname}${url.search}`, headers };
    this.#targets.set(origin.address, { target, origin });
    return target;
  }

  /** Closes clients of origins no longer in use (e.g. after pools changed through the API). */
  prune(inUse: Iterable<Origin>): void {
    const keep = new Set<string>();
    const addresses = new Set<string>();
    for (const origin of inUse) {
      addresses.add(origin.address);
      try {
        const url = originUrl(origin.address);
        keep.add(`${url.protocol}//${url.host}`);
      } catch {
        // unusable addresses never got a pool
      }
    }
    for (const address of this.#targets.keys()) if (!addresses.has(address)) this.#targets.delete(address);
    for (const [key, pool] of this.#pools) {
      if (!keep.has(key)) {
        this.#pools.delete(key);
        void pool.close().catch(() => undefined);
      }
    }
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    this.#targets.clear();
    await Promise.all(pools.map((pool) => pool.destroy().catch(() => undefined)));
  }
}

export interface OriginResponse {
  readonly status: number;
  /** The whole body; or, when `rest` is set, the bytes received before the answer started streaming. */
  readonly body: Buffer;
  /** The rest of a large 2xx body, still arriving (see `streamAfter`). Reading it drives the origin. */
  readonly rest?: Readable;
  /** Content-Length the origin announced, when it did. */
  readonly length?: number;
}

/** How many bytes of a body the stream `rest` may hold before the origin is paused (backpressure). */
const STREAM_HIGH_WATER = 256 * 1024;

/** An exchange in flight: its answer, and a way to stop it (rejects `response` with `reason`). */
export interface Exchange {
  readonly response: Promise<OriginResponse>;
  abort(reason: Error): void;
}

/**
 * POSTs `body` to the target and collects the answer. Uses undici's dispatch API directly: the
 * request() API wraps every answer in a Readable stream, which costs more per request than the bytes
 * themselves for typical JSON-RPC answers; and it is stopped through `abort` rather than an AbortSignal,
 * because a signal per attempt (plus its listeners) is a measurable share of a forwarded request.
 * `response` rejects with undici's own errors (their codes kept) or with the reason given to `abort`;
 * `timeoutMs` bounds the wait for headers and between body chunks.
 *
 * With `streamAfter`, a 2xx body that grows past that many bytes resolves early: `body` holds what
 * arrived so far and `rest` streams the remainder, so a large answer never sits whole in memory. The
 * stream pauses the origin while its reader lags, errors if the origin fails midway, and destroying it
 * aborts the request; `abort` no longer applies once the answer streams.
 */
export function exchange(target: OriginTarget, body: Buffer, timeoutMs: number, streamAfter?: number): Exchange {
  let settled = false;
  let controller: Dispatcher.DispatchController | undefined;
  let status = 0;
  let length: number | undefined;
  let size = 0;
  let chunks: Buffer[] = [];
  let rest: Readable | undefined;
  let ended = false;
  let abortReason: Error | undefined;
  let resolve!: (value: OriginResponse) => void;
  let reject!: (err: Error) => void;
  const response = new Promise<OriginResponse>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const finish = (err: Error | undefined): void => {
    if (settled) return;
    settled = true;
    if (err !== undefined) reject(err);
    else resolve({ status, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size), length });
  };
  const startStreaming = (c: Dispatcher.DispatchController): void => {
    const head = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
    chunks = [];
    const stream = new Readable({
      highWaterMark: STREAM_HIGH_WATER,
      read: () => c.resume(),
      destroy: (err, callback) => {
        // Destroyed before the origin finished (the client left, or a pipe failed): stop the origin.
        if (!ended && !c.aborted) c.abort(err ?? new Error('the client stopped reading'));
        callback(err);
      },
    });
    rest = stream;
    settled = true;
    resolve({ status, body: head, rest: stream, length });
  };
  target.pool.dispatch(
    {
      method: 'POST',
      path: target.path,
      headers: target.headers,
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    },
    {
      onRequestStart(c) {
        controller = c;
        // Aborted while it waited for a connection: never send it.
        if (abortReason !== undefined) c.abort(abortReason);
      },
      onResponseStart(_c, statusCode, headers) {
        status = statusCode;
        const announced = Number(headers['content-length']);
        if (Number.isSafeInteger(announced) && announced >= 0) length = announced;
      },
      onResponseData(c, chunk) {
        if (rest !== undefined) {
          if (!rest.push(chunk)) c.pause();
          return;
        }
        if (settled) return;
        chunks.push(chunk);
        size += chunk.length;
        if (streamAfter !== undefined && size > streamAfter && status >= 200 && status < 300) startStreaming(c);
      },
      onResponseEnd() {
        ended = true;
        if (rest !== undefined) rest.push(null);
        else finish(undefined);
      },
      onResponseError(_c, err) {
        ended = true;
        if (rest !== undefined) rest.destroy(err);
        else finish(err);
      },
    },
  );
  return {
    response,
    abort(reason) {
      if (settled) return;
      abortReason = reason;
      controller?.abort(reason);
      finish(reason);
    },
  };
}
