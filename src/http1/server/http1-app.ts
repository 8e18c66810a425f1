/**
 * What an application gives the server (http1-server.ts): the callbacks through which requests come in
 * and answers go out. Each request arrives once, as a `ServerExchange`, as soon as its head is parsed;
 * the application answers it once (`send` or `stream`), in any order — the connection writes answers in
 * request order. Refusals at the HTTP level (malformed, too large, timeout) arrive through `refused`,
 * also to be answered once.
 */
import type { Socket } from 'node:net';
import type { RequestRefusal } from './request-refusal.js';
import type { ServerExchange } from './server-exchange.js';

/** What a server does with requests. */
export interface Http1App {
  /** A request's head arrived: answer `exchange` once (send or stream). */
  request(exchange: ServerExchange): void;
  /** A request was refused at the HTTP level before it reached `request`: answer with the error. */
  refused(exchange: ServerExchange, error: RequestRefusal): void;
  /** An answer was handed to the socket in full (not called for answers cut short). */
  answered?(exchange: ServerExchange): void;
  /** A connection was destroyed because its client took no bytes of a streamed answer for streamStallMs. */
  streamCut?(): void;
  /**
   * Takes over the connection of a request asking to switch protocols (e.g. WebSocket): an HTTP/1.1
   * request without a body, with `upgrade` listed in `Connection` and an `Upgrade` header naming one of
   * `upgradeProtocols` (request-head.ts `asksUpgrade`). Without this hook, or for another protocol,
   * such a request is an ordinary one.
   * - When: once every earlier answer on the connection was handed to the socket; no request after
   *   it is read.
   * - `socket` is the hook's from then on: paused (call `resume()` once listening), with none of the
   *   server's listeners left ('error' included: attach one), no server timeout or limit applied.
   * - `rest`: the bytes the server had read past the request's head (the new protocol's first bytes;
   *   often empty). Bytes that came later wait in the paused socket.
   * - The hook answers on the socket itself (`101 Switching Protocols`, or a refusal); `exchange` gives
   *   the request's method, target and headers, and its `send`/`stream` do nothing.
   * - `Http1Server.close` destroys such sockets still open when its grace period ends; a hook that
   *   throws has the socket destroyed.
   */
  upgrade?(exchange: ServerExchange, socket: Socket, rest: Buffer): void;
  /** The protocols `upgrade` takes, lowercase (e.g. `['websocket']`); undefined: any. */
  readonly upgradeProtocols?: readonly string[];
}
