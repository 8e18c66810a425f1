/**
 * The HTTP/1.1 server and client: the whole public surface of http1/. Code outside this folder imports
 * only this file; everything else here is internal. http1/ imports only `node:` modules and knows
 * nothing of JSON-RPC, origins or the outbound policy (a caller hands in a structural `EndpointGuard`).
 *
 * Server — `new Http1Server(options, app)`, then `listen(port, host)`; `close(graceMs)`.
 *   - Exchanges in: each request reaches `app.request` once, as a `ServerExchange`, as soon as its head
 *     is parsed (its body with it when it came in the same read; else `readBody()`). A request refused
 *     at the HTTP level (malformed, head or body too large, unsupported encoding, timeout, client gone
 *     mid-body) reaches `app.refused` with a `RequestRefusal` instead; its answer closes the connection.
 *   - Answers out: the application answers each exchange once, with `send` (whole body) or `stream`
 *     (head now, a Readable after), in any order and at any time; the connection writes answers in
 *     request order (pipelining), parking early ones. A second answer, or one after the client left,
 *     is dropped (a `rest` given with it is destroyed). `app.answered` says when an answer was handed
 *     to the socket in full; `inFlight` counts exchanges not yet that far.
 *   - Backpressure: reading pauses while `pipelineDepth` (16) requests are unanswered or their bodies
 *     hold ≥ maxBodyBytes, or while the socket's write buffer is full; a streamed answer's source is
 *     paused while the socket is full. Streamed pieces that are views of the `buffers` pool are
 *     released there once written.
 *   - Errors: a client leaving aborts the exchange's `signal()` (a `GoneSignal`, made on first use) and
 *     destroys a streamed answer's source; a source failing midway cuts the connection (a truncated
 *     answer, never a wrong one); an `app.request` that throws destroys the connection.
 *   - Timeouts: a request's head and body within `requestTimeoutMs` of its first byte (else a 'timeout'
 *     refusal), idle keep-alive connections closed after `idleTimeoutMs`, a streamed answer whose
 *     client takes nothing for `streamStallMs` cut (`app.streamCut`); connection limits on accept.
 *   - Upgrades: with `app.upgrade`, an HTTP/1.1 request without a body carrying `Upgrade` and
 *     `Connection: upgrade` is the last one read on its connection; once earlier answers are written the
 *     hook gets the exchange, the (paused) socket and the bytes read past the head, and owns the
 *     socket from then on. Without the hook such requests are ordinary requests.
 *
 * Client — an `EndpointPool` per endpoint (`Endpoint`: TLS or not, host, port, optional CA, guard,
 * `insecure` to skip the certificate check) keeps up to `connections` keep-alive sockets;
 * `dispatch(new ClientExchange(bytes, timeoutMs, streamAfter, replayable))` with bytes from
 * `requestHead` + `requestBytes`, or `bodilessRequest`.
 *   - Ordering: one exchange per connection at a time (no pipelining); waiting exchanges are served in
 *     FIFO order, by the most recently used idle connection.
 *   - `response` resolves with the status, the whole body and the Location header if one came — or,
 *     with `streamAfter`, a 2xx body past that many bytes resolves early with `rest`, a Readable of
 *     the remainder (an answer to HEAD has no body). Backpressure: the socket
 *     is paused while `rest` holds 256 KiB unread; destroying `rest` drops the connection.
 *     Large answers are read into the pool's `buffers` (released by whoever writes them out).
 *   - Abort: `abort(reason)` rejects `response` with `reason`; a waiting exchange is never written
 *     (`busy` tells whether it waited for busy connections), a written one takes its connection down.
 *     `truncate()` ends an answer early with the body so far (its connection is dropped).
 *   - Errors: `response` rejects with Node's socket errors (codes kept) or a `ClientError` (ORIGIN_*
 *     codes); a connection is never reused after anything unexpected. A replayable exchange that met a
 *     stale keep-alive socket is sent once more on a fresh one.
 *   - Timeouts: connect (`connectTimeoutMs`, TLS included); per exchange, `timeoutMs` for the answer's
 *     head and between body chunks (not while our own reader lags); idle sockets closed after
 *     `idleTimeoutMs` (30 s by default) or the origin's Keep-Alive hint.
 *
 * Buffers — one `BufferPool`, made by the program and given to both halves when answers pass from the
 * client to the server (the gateway's case), so read buffers are recycled instead of collected.
 */
export { BufferPool, READ_BYTES } from './buffer-pool.js';
export type { Endpoint, EndpointGuard } from './client/client-connection.js';
export { ClientError, type ClientErrorCode } from './client/client-error.js';
export { ClientExchange, type ClientResponse, type PendingResponse } from './client/client-exchange.js';
export { EndpointPool, type EndpointPoolOptions } from './client/endpoint-pool.js';
export { bodilessRequest, requestBytes, requestHead } from './client/request-head.js';
export type { HeaderList } from './server/answer-head.js';
export { GoneSignal } from './server/gone-signal.js';
export type { Http1App } from './server/http1-app.js';
export { Http1Server, type Http1ServerLimits, type Http1ServerOptions } from './server/http1-server.js';
export { type RefusalKind, RequestRefusal } from './server/request-refusal.js';
export type { ServerExchange } from './server/server-exchange.js';
