/**
 * An HTTP(S) listener with graceful close, shared by the gateway and (if it wants) the management API.
 *
 * - `listen` is "host:port"; port 0 picks a free port, and `url` reports the port really bound.
 *   A wildcard host (0.0.0.0, ::) is reported as 127.0.0.1 in `url` so tests and logs get a usable URL.
 * - `tls: {cert_file, key_file}` serves HTTPS with those PEM files; without it the listener is plain HTTP.
 * - `close(graceMs)` stops accepting at once, lets requests in flight finish, closes idle keep-alive
 *   sockets as soon as they are idle, and after `graceMs` cuts whatever is still open.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface ListenerOptions {
  listen: string;
  tls?: { cert_file: string; key_file: string } | undefined;
  /** Longest time a client may take to send its headers and body (ms). */
  requestTimeoutMs?: number;
}

export interface Listener {
  /** Base URL, e.g. http://127.0.0.1:8545 (no trailing slash). */
  readonly url: string;
  readonly port: number;
  /** Requests whose response has not finished yet. */
  readonly inFlight: number;
  close(graceMs: number): Promise<void>;
}

export function splitHostPort(listen: string): { host: string; port: number } {
  const index = listen.lastIndexOf(':');
  const rawHost = listen.slice(0, index);
  const host = rawHost.startsWith('[') ? rawHost.slice(1, -1) : rawHost;
  return { host, port: Number(listen.slice(index + 1)) };
}

export async function startListener(options: ListenerOptions, handler: http.RequestListener): Promise<Listener> {
  let inFlight = 0;
  let closing = false;
  const tracked: http.RequestListener = (req, res) => {
    inFlight += 1;
    res.on('close', () => {
      inFlight -= 1;
      // While closing, a socket whose last request just finished turns idle right after this event:
      // close it then, instead of waiting for the grace timer.
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
    handler(req, res);
  };
  const serverOptions: http.ServerOptions = {
    requestTimeout: options.requestTimeoutMs ?? 60_000,
    keepAliveTimeout: 30_000,
  };
  const server: http.Server = options.tls
    ? https.createServer(
        { ...serverOptions, cert: readFileSync(options.tls.cert_file), key: readFileSync(options.tls.key_file) },
        tracked,
      )
    : http.createServer(serverOptions, tracked);
  const { host, port } = splitHostPort(options.listen);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `${options.tls ? 'https' : 'http'}://${shownHost}:${bound}`;

  let closed: Promise<void> | undefined;
  return {
    url,
    port: bound,
    get inFlight() {
      return inFlight;
    },
    close(graceMs: number): Promise<void> {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closed;
    },
  };
}
