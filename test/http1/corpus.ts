/**
 * Requests for the listener's tests: valid ones (some holding several pipelined requests) and
 * invalid ones with the kind of refusal each must get — the request-smuggling vectors among them.
 */
import type { RequestRefusal } from '../../src/http1/server/request-refusal.js';

/** Valid requests (each may hold several pipelined ones). */
export const VALID: Record<string, string> = {
  get: 'GET /v1/sepolia?key=abc HTTP/1.1\r\nHost: x\r\n\r\n',
  post: 'POST /v1/sepolia HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"a":"bc"}\n',
  chunked:
    'POST /v1/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n1 ;x\r\n!\r\n0\r\nX-Trailer: yes\r\nX-Other: 1\r\n\r\n',
  chunkedUpper: 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n',
  http10: 'POST / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc',
  http10KeepAlive: 'GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n',
  close: 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
  expect: 'POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi',
  pipelined:
    'POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\nHost: x\r\n\r\n' +
    'POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n',
  leadingEmptyLines: '\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n',
  sameLengthTwice: 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok',
  spacesAroundValue: 'GET / HTTP/1.1\r\nHost:   x \t\r\nX-Empty:\r\nX-Latin: caf\xe9\r\n\r\n',
};

/** Invalid requests and the kind each is refused with. */
export const INVALID: Record<string, [string, RequestRefusal['kind']]> = {
  bareLfHead: ['GET / HTTP/1.1\nHost: x\n\n', 'malformed'],
  bareLfOneLine: ['GET / HTTP/1.1\r\nHost: x\n\r\n', 'malformed'],
  bareCrInValue: ['GET / HTTP/1.1\r\nHost: x\rX: y\r\n\r\n', 'malformed'],
  obsFold: ['GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  continued\r\n\r\n', 'malformed'],
  spaceBeforeColon: ['GET / HTTP/1.1\r\nHost: x\r\nContent-Length : 3\r\n\r\nabc', 'malformed'],
  badNameChar: ['GET / HTTP/1.1\r\nHost: x\r\nX(y): 1\r\n\r\n', 'malformed'],
  noColon: ['GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n', 'malformed'],
  nulInValue: ['GET / HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n', 'malformed'],
  clNotDigits: ['POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3a\r\n\r\nabc', 'malformed'],
  clSigned: ['POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc', 'malformed'],
  clList: ['POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 3\r\n\r\nabc', 'malformed'],
  clDiffering: ['POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd', 'malformed'],
  clEmpty: ['POST / HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n\r\n', 'malformed'],
  clWithTe: [
    'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'malformed',
  ],
  teWithCl: [
    'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n',
    'malformed',
  ],
  teGzip: ['POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n', 'malformed'],
  teChunkedNotLast: ['POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n', 'malformed'],
  teGzipChunked: [
    'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n',
    'unsupported-encoding',
  ],
  teTwice: [
    'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'unsupported-encoding',
  ],
  teChunkedSuffix: ['POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n', 'malformed'],
  teIn10: ['POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 'malformed'],
  noHost11: ['GET / HTTP/1.1\r\n\r\n', 'malformed'],
  twoHosts: ['GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 'malformed'],
  http2: ['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'malformed'],
  http12: ['GET / HTTP/1.2\r\nHost: x\r\n\r\n', 'malformed'],
  lowercaseVersion: ['GET / http/1.1\r\nHost: x\r\n\r\n', 'malformed'],
  twoSpaces: ['GET  / HTTP/1.1\r\nHost: x\r\n\r\n', 'malformed'],
  targetSpace: ['GET /a b HTTP/1.1\r\nHost: x\r\n\r\n', 'malformed'],
  targetHighByte: ['GET /caf\xe9 HTTP/1.1\r\nHost: x\r\n\r\n', 'malformed'],
  badMethod: ['G@T / HTTP/1.1\r\nHost: x\r\n\r\n', 'malformed'],
  chunkSizeNotHex: ['POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 'malformed'],
  chunkSizeBareLf: ['POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n', 'malformed'],
  chunkSizeNegative: [
    'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n-3\r\nabc\r\n0\r\n\r\n',
    'malformed',
  ],
  chunkSizeSpaceOnly: [
    'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3 \r\nabc\r\n0\r\n\r\n',
    'malformed',
  ],
  chunkDataNoCrlf: [
    'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n',
    'malformed',
  ],
  chunkSizeHuge: ['POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1000000000\r\n', 'malformed'],
  trailerBareLf: ['POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\n\r\n', 'malformed'],
  trailerFold: ['POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n 2\r\n\r\n', 'malformed'],
  declaredTooLarge: ['POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n', 'body-too-large'],
  chunkedTooLarge: [
    'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1f4\r\n' + 'a'.repeat(500) + '\r\n1f5\r\n',
    'body-too-large',
  ],
};
