/**
 * `GET /healthz` and `GET /readyz` on the gateway listener (SPEC §11), for load balancers and
 * orchestrators; docs/gateway.md "Health and readiness". Answered by the edge before the `/v1/{network}`
 * path, API key and rate limit checks (probes carry no key and must not spend a client's budget).
 * - `/healthz`: 200 `{"ok":true}` whenever the process answers at all (liveness).
 * - `/readyz`: 200 when ready, else 503; body `{ready, store: {ready, reason}, networks: {name: {ready,
 *   reason}}}` (readiness.ts).
 * GET and HEAD (same status, no body); other methods get 405 with `Allow: GET, HEAD`. A query string is
 * ignored. Answers carry `Cache-Control: no-store`.
 */
import { SwitchyardError } from '../../errors/base.js';
import type { ServerExchange } from '../../http1/index.js';
import type { Logger } from '../../log.js';
import type { GatewayReadiness } from '../readiness.js';
import { echoedPath, edgeError, sendBody, sendError } from './respond.js';

const HEALTHZ = /^\/healthz\/?(?:\?.*)?$/;
const READYZ = /^\/readyz\/?(?:\?.*)?$/;
const HEADERS = { 'cache-control': 'no-store' };
const ALIVE = Buffer.from('{"ok":true}');

/** The edge's probe hook: answers `ex` and returns true when it is a probe path, else false. */
export function probeEndpoints(readiness: GatewayReadiness, logger: Logger): (ex: ServerExchange) => boolean {
  return (ex) => {
    const live = HEALTHZ.test(ex.target);
    if (!live && !READYZ.test(ex.target)) return false;
    if (ex.method !== 'GET' && ex.method !== 'HEAD') {
      throw new SwitchyardError(
        'HTTP_METHOD_NOT_ALLOWED',
        `${echoedPath(ex.target)} answers GET (or HEAD), not ${ex.method}.`,
        {
          headers: { allow: 'GET, HEAD' },
        },
      );
    }
    if (live) {
      sendBody(ex, 200, ALIVE, HEADERS);
      return true;
    }
    readiness.report().then(
      (report) => sendBody(ex, report.ready ? 200 : 503, Buffer.from(JSON.stringify(report)), HEADERS),
      (err: unknown) => sendError(ex, edgeError(err, logger), undefined, HEADERS),
    );
    return true;
  };
}
