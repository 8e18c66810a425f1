/**
 * The gateway's HTTP(S) listener: the lean HTTP/1.1 server of ./wire (not node:http; why, and what
 * it accepts and refuses: docs/gateway.md "The listener's HTTP/1.1"), with a prompt graceful close.
 *
 * - `listen` is "host:port"; port 0 picks a free port, and `url` reports the port really bound.
 *   A wildcard host (0.0.0.0, ::) is reported as 127.0.0.1 in `url` so tests and logs get a usable URL.
 * - `tls: {cert_file, key_file}` serves HTTPS with those PEM files; without it the listener is plain HTTP.
 * - Timeouts: a request's head and body within `requestTimeoutMs` (60 s), idle keep-alive connections
 *   closed after `idleTimeoutMs` (30 s), a streamed answer whose client takes nothing for
 *   `streamStallMs` (30 s) cut. Bodies over `maxBodyBytes` (1 MiB) are refused (413).
 * - Connections: at most `maxConnections` at once and `maxConnectionsPerClient` per remote address
 *   (no limit when absent; addresses `uncountedPeer` names are not counted per address); one over a
 *   limit is closed as it is accepted (http1/server/http1-server.ts).
 * - `close(graceMs)` stops accepting at once, closes connections with no request in flight (idle
 *   keep-alive sockets, sockets that never sent a whole request, unfinished TLS handshakes) at once,
 *   lets requests in flight finish and closes their connections as soon as they end, and after
 *   `graceMs` cuts whatever is still open (http1/server/http1-server.ts).
 * - A config reload (SPEC §15) adjusts the limits of the running listener (`adjust`: connection limits
 *   for the next accept, the body limit for connections opened from then on, the stall limit at once)
 *   and, with TLS, the certificate new handshakes get (`secure`: the files re-read by the reload).
 */
import { readTlsPair, type TlsPair } from '../../config/tls-files.js';
import { type BufferPool, type Http1App, Http1Server, type Http1ServerLimits } from '../../http1/index.js';

export interface ListenerOptions {
  listen: string;
  tls?: { cert_file: string; key_file: string } | undefined;
  /** Largest request body (bytes); default 1 MiB. */
  maxBodyBytes?: number;
  /** Longest time a client may take to send a request's head and body (ms); default 60 s. */
  requestTimeoutMs?: number;
  /** Longest time a connection may stay open with no request (ms); default 30 s. */
  idleTimeoutMs?: number;
  /** Longest time a streamed answer's client may take no bytes (ms); default 30 s. */
  streamStallMs?: number;
  maxConnections?: number;
  maxConnectionsPerClient?: number;
  /** Remote addresses maxConnectionsPerClient does not count (`gateway.trusted_proxies`). */
  uncountedPeer?: ((address: string) => boolean) | undefined;
  /** A connection was closed as it was accepted, for being over a limit. */
  refused?: (limit: 'max_connections' | 'max_connections_per_client') => void;
  /** The read buffers streamed answers come in (the origin clients' pool): released here once written. */
  buffers: BufferPool;
}

export interface Listener {
  /** Base URL, e.g. http://127.0.0.1:8545 (no trailing slash). */
  readonly url: string;
  readonly port: number;
  /** Requests whose response has not finished yet. */
  readonly inFlight: number;
  adjust(limits: Http1ServerLimits): void;
  /** The certificate and key new TLS handshakes present (only for a listener started with `tls`). */
  secure(pair: TlsPair): void;
  close(graceMs: number): Promise<void>;
}

export function splitHostPort(listen: string): { host: string; port: number } {
  const index = listen.lastIndexOf(':');
  const rawHost = listen.slice(0, index);
  const host = rawHost.startsWith('[') ? rawHost.slice(1, -1) : rawHost;
  return { host, port: Number(listen.slice(index + 1)) };
}

export async function startListener(options: ListenerOptions, app: Http1App): Promise<Listener> {
  const server = new Http1Server(
    {
      tls: options.tls ? readTlsPair(options.tls) : undefined,
      maxBodyBytes: options.maxBodyBytes ?? 1_048_576,
      requestTimeoutMs: options.requestTimeoutMs ?? 60_000,
      idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
      streamStallMs: options.streamStallMs ?? 30_000,
      ...(options.maxConnections !== undefined && { maxConnections: options.maxConnections }),
      ...(options.maxConnectionsPerClient !== undefined && {
        maxConnectionsPerClient: options.maxConnectionsPerClient,
      }),
      ...(options.uncountedPeer !== undefined && { uncountedPeer: options.uncountedPeer }),
      ...(options.refused !== undefined && { refused: options.refused }),
      buffers: options.buffers,
    },
    app,
  );
  const { host, port } = splitHostPort(options.listen);
  const bound = (await server.listen(port, host)).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `${options.tls ? 'https' : 'http'}://${shownHost}:${bound}`;

  return {
    url,
    port: bound,
    get inFlight() {
      return server.inFlight;
    },
    adjust: (limits) => server.adjust(limits),
    secure: (pair) => server.secure(pair),
    close: (graceMs: number) => server.close(graceMs),
  };
}
