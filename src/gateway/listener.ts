/**
 * The gateway's HTTP(S) listener, with a prompt graceful close.
 *
 * - `listen` is "host:port"; port 0 picks a free port, and `url` reports the port really bound.
 *   A wildcard host (0.0.0.0, ::) is reported as 127.0.0.1 in `url` so tests and logs get a usable URL.
 * - `tls: {cert_file, key_file}` serves HTTPS with those PEM files; without it the listener is plain HTTP.
 * - `close(graceMs)` stops accepting at once, closes connections with no request in flight (idle
 *   keep-alive sockets, sockets that never sent a whole request) at once, lets requests in flight
 *   finish and closes their connections as soon as they end, and after `graceMs` cuts whatever is still
 *   open (src/connections.ts).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { ConnectionTracker } from '../connections.js';

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
  const serverOptions: http.ServerOptions = {
    requestTimeout: options.requestTimeoutMs ?? 60_000,
    keepAliveTimeout: 30_000,
  };
  const server: http.Server = options.tls
    ? https.createServer({
        ...serverOptions,
        cert: readFileSync(options.tls.cert_file),
        key: readFileSync(options.tls.key_file),
      })
    : http.createServer(serverOptions);
  // The tracker's 'request' listener goes first, so it sees each request before the handler answers it.
  const connections = new ConnectionTracker(server);
  server.on('request', handler);
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

  return {
    url,
    port: bound,
    get inFlight() {
      return connections.inFlight;
    },
    close: (graceMs: number) => connections.close(graceMs),
  };
}
