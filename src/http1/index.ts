/**
 * The HTTP/1.1 server and client: the whole public surface of http1/. Code outside this folder imports
 * only this file; everything else here is internal. http1/ itself imports only `node:` modules: it knows
 * nothing of JSON-RPC, origins or the outbound policy (a caller hands in a structural `ConnectGuard`).
 *
 * Server: `Http1Server` accepts sockets and hands each parsed request to an `Http1App` as a
 * `ServerExchange`; refusals at the HTTP level arrive as `RequestRefusal`; `GoneSignal` tells when the
 * client left. Client: an `EndpointPool` per endpoint runs `ClientExchange`s (request bytes built by
 * `requestHead` + `requestBytes`) and resolves `ClientResponse`s, failing with `ClientError` codes.
 * `readBuffers` is the one process-wide `BufferPool` shared by both halves (large answers stream through
 * it without copies); it is to be injected instead in a later change.
 */
export { BufferPool, READ_BYTES } from './buffer-pool.js';
export type { Endpoint, EndpointGuard } from './client/client-connection.js';
export { ClientError, type ClientErrorCode } from './client/client-error.js';
export { ClientExchange, type ClientResponse, type PendingResponse } from './client/client-exchange.js';
export { EndpointPool, type EndpointPoolOptions } from './client/endpoint-pool.js';
export { requestBytes, requestHead } from './client/request-head.js';
export type { HeaderList } from './server/answer-head.js';
export { GoneSignal } from './server/gone-signal.js';
export { Http1Server, type Http1ServerOptions } from './server/http1-server.js';
export { type RefusalKind, RequestRefusal } from './server/request-refusal.js';
export type { Http1App } from './server/server-connection.js';
export type { ServerExchange } from './server/server-exchange.js';
