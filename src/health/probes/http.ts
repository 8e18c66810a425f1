import type { MonitorSettings } from '../../model/monitor-schema.js';
import type { Origin } from '../../model/pool.js';
import { matchesExpectedCodes } from './expected-codes.js';
import { failed, type ProbeResult, passed, throttledCheck } from './result.js';
import { checkHeaders, forRedirect, httpCheckUrl } from './target.js';
import { isProbeResponse, type ProbeTransport } from './transport.js';

/**
 * The http/https check: `method` on `path`, passes when the status matches `expected_codes` and, when
 * `expected_body` is set, the first 64 KiB of the body contain it (case-insensitive, as Cloudflare does).
 * Redirects (3xx with Location) are followed up to 5 hops when `follow_redirects`, else the 3xx status is
 * judged as is; a hop to another scheme/host/port goes without the secret-looking headers (target.ts).
 * `allow_insecure` skips certificate verification. A 429 (unless expected) throttles the check: it counts
 * neither up nor down (result.ts).
 */
const MAX_BODY = 64 * 1024;
const MAX_REDIRECTS = 5;
/** Methods that are safe to send twice (RFC 9110 §9.2.2), so a probe may be replayed on a fresh socket. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

export async function httpCheck(
  transport: ProbeTransport,
  origin: Origin,
  monitor: MonitorSettings,
): Promise<ProbeResult> {
  const first = httpCheckUrl(origin.address, monitor);
  const headers = checkHeaders(origin, monitor, first);
  let url = first;
  let firstRtt: number | null = null;
  for (let hop = 0; ; hop++) {
    const response = await transport.send({
      url,
      method: monitor.method,
      headers: forRedirect(headers, first, url),
      timeoutMs: monitor.timeout * 1000,
      allowInsecure: monitor.allow_insecure,
      maxBodyBytes: MAX_BODY,
      replayable: IDEMPOTENT.has(monitor.method),
    });
    if (!isProbeResponse(response)) return response;
    firstRtt ??= response.rttMs;
    const { location } = response;
    if (monitor.follow_redirects && response.status >= 300 && response.status < 400 && location !== undefined) {
      if (hop >= MAX_REDIRECTS) return failed(`more than ${MAX_REDIRECTS} redirects`, response.status, firstRtt);
      if (!URL.canParse(location, url.href)) {
        return failed(`HTTP ${response.status} with a Location that is not a URL`, response.status, firstRtt);
      }
      url = new URL(location, url);
      continue;
    }
    if (response.status === 429 && !matchesExpectedCodes(429, monitor.expected_codes)) {
      return throttledCheck('HTTP 429', response.status, firstRtt);
    }
    if (!matchesExpectedCodes(response.status, monitor.expected_codes)) {
      return failed(`HTTP ${response.status}, expected ${monitor.expected_codes}`, response.status, firstRtt);
    }
    if (monitor.expected_body !== '' && !response.body.toLowerCase().includes(monitor.expected_body.toLowerCase())) {
      return failed(`response body does not contain "${monitor.expected_body}"`, response.status, firstRtt);
    }
    return passed(response.status, firstRtt);
  }
}
