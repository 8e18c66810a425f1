import { isIP } from 'node:net';
import { BufferPool, type EndpointGuard, EndpointPool } from '../../http1/index.js';

/**
 * The monitors' connections, shared by every account's view of the probe transport (transport.ts): one
 * EndpointPool of the project's HTTP/1.1 client (http1/) per destination (scheme, host, port), per
 * certificate rule (`allow_insecure`) and per kind of outbound rules (whose guard checks every connect).
 *
 * State: the pools by key, and a sweep every SWEEP_MS that drops the pools with no connection and no
 * waiting request, so destinations that left the configuration leave nothing behind. A pool keeps at
 * most CONNECTIONS sockets; idle ones close after IDLE_MS: a probe every few seconds reuses its socket,
 * and a dead origin still fails fast because its socket is gone. `close()` refuses new requests and lets
 * running ones finish.
 */
/**
 * Sockets per destination: as many as one round probes at once (round.ts PROBE_CONCURRENCY), so the
 * origins of a pool behind one provider host are checked side by side. A probe that waits for a socket
 * waits on its own `timeout`, so with fewer sockets a slow host's queue failed checks the origins would
 * have passed.
 */
const CONNECTIONS = 32;
const IDLE_MS = 4_000;
/**
 * Bounds the TCP and TLS connect. A request's own deadline, the monitor's `timeout` (at most 10 s), runs
 * from before its connect starts, so it always ends first: the check says "timeout after N s".
 */
const CONNECT_TIMEOUT_MS = 10_000;
const SWEEP_MS = 60_000;

export class ProbePools {
  readonly #pools = new Map<string, EndpointPool>();
  /** Where answers past 64 KiB are read into (probe bodies are capped at 1 MiB). */
  readonly #buffers = new BufferPool();
  readonly #sweep: NodeJS.Timeout;
  #closed = false;

  constructor() {
    this.#sweep = setInterval(() => this.dropEmpty(), SWEEP_MS);
    this.#sweep.unref();
  }

  /** Open pools (for tests and metrics). */
  get size(): number {
    return this.#pools.size;
  }

  /**
   * The pool for `url`'s destination. `rulesKey` names the outbound rules `guard` applies; `insecure`
   * skips the certificate check of an https destination. Throws once closed.
   */
  pool(url: URL, insecure: boolean, rulesKey: string, guard: EndpointGuard): EndpointPool {
    if (this.#closed) throw new Error('the probe transport was closed');
    const tls = url.protocol === 'https:';
    const port = url.port === '' ? (tls ? 443 : 80) : Number(url.port);
    const key = `${url.protocol}//${url.hostname}:${port}|${tls && insecure}|${rulesKey}`;
    let pool = this.#pools.get(key);
    if (pool === undefined) {
      // URL keeps an IPv6 literal in brackets; sockets want it bare, and SNI never carries an IP.
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      pool = new EndpointPool(
        {
          tls,
          host,
          port,
          servername: isIP(host) === 0 ? host : undefined,
          ca: undefined,
          session: undefined,
          guard,
          insecure: tls && insecure,
        },
        {
          connections: CONNECTIONS,
          connectTimeoutMs: CONNECT_TIMEOUT_MS,
          buffers: this.#buffers,
          idleTimeoutMs: IDLE_MS,
        },
      );
      this.#pools.set(key, pool);
    }
    return pool;
  }

  /** Refuses new requests (and stops the sweep); running ones finish, idle sockets close now. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#sweep);
    for (const pool of this.#pools.values()) pool.close();
    this.#pools.clear();
  }

  /** Drops the pools with no connection and no waiting request (every SWEEP_MS; tests call it). */
  dropEmpty(): void {
    for (const [key, pool] of this.#pools) {
      if (pool.size === 0 && pool.waiting === 0) {
        this.#pools.delete(key);
        pool.close();
      }
    }
  }
}
