import { isSecretHeader } from '../../model/header-secrets.js';
import type { MonitorSettings } from '../../model/monitor-schema.js';
import { destinationOf, originTarget, originUrl } from '../../model/origin-address.js';
import { originRequestHeaders } from '../../model/origin-request.js';
import type { Origin } from '../../model/pool.js';

/**
 * Where a check goes and what it carries, from the origin address model (model/origin-address.ts).
 * - jsonrpc monitors reach the origin exactly as the gateway does: the stored address's path and query
 *   (never a `/` appended), the gateway's headers (model/origin-request.ts: Host, JSON content type,
 *   the origin's `header` map, Basic auth from user:password). A monitor `port` other than 0 replaces
 *   the port.
 * - http/https monitors (Cloudflare semantics): the monitor's scheme (`type`), the origin's host, the
 *   monitor's `port` (0 = the port the address names, else the scheme default) and `path`; the origin's
 *   `header` map, Basic auth from the address's user:password.
 * Secrets stay with their destination: the origin's Basic auth and its secret-looking headers
 * (header-secrets.ts) are sent only when the check goes to the origin's own scheme, host and port;
 * otherwise they are left out. Then the monitor's `header` on top (the monitor wins on the same name),
 * and `user-agent: Switchyard-Health-Monitor` unless one is set.
 */
export function httpCheckUrl(address: string, monitor: MonitorSettings): URL {
  const base = originUrl(address);
  const scheme = monitor.type === 'https' ? 'https:' : 'http:';
  const url = new URL(monitor.path, `${scheme}//${base.hostname}`);
  url.protocol = scheme;
  if (monitor.port !== 0) url.port = String(monitor.port);
  else url.port = base.port;
  return url;
}

export function jsonRpcCheckUrl(address: string, monitor: MonitorSettings): URL {
  const url = originUrl(address);
  if (monitor.port !== 0) url.port = String(monitor.port);
  return url;
}

/** The headers of a check sent to `url` (the first hop; redirects go through `forRedirect`). */
export function checkHeaders(origin: Origin, monitor: MonitorSettings, url: URL): Record<string, string | string[]> {
  const target = originTarget(origin.address);
  const headers = new Map<string, string | string[]>(originRequestHeaders(origin, target));
  if (monitor.type !== 'jsonrpc') {
    headers.delete('content-type');
    headers.delete('accept');
  }
  // The address's host:port is right only when the check goes there; a configured Host is kept.
  if (!Object.keys(origin.header).some((name) => name.toLowerCase() === 'host')) headers.delete('host');
  if (destinationOf(url.href) !== target.destination) {
    for (const name of [...headers.keys()]) if (isSecretHeader(name)) headers.delete(name);
  }
  for (const [name, values] of Object.entries(monitor.header)) {
    headers.set(name.toLowerCase(), values.length === 1 ? (values[0] as string) : values);
  }
  if (!headers.has('user-agent')) headers.set('user-agent', 'Switchyard-Health-Monitor');
  return Object.fromEntries(headers);
}

/**
 * The headers for a redirect hop to `next`: unchanged while the hop stays on the first hop's scheme,
 * host and port, without every secret-looking header (Authorization included) once it leaves.
 */
export function forRedirect(
  headers: Record<string, string | string[]>,
  first: URL,
  next: URL,
): Record<string, string | string[]> {
  if (destinationOf(next.href) === destinationOf(first.href)) return headers;
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !isSecretHeader(name) && name !== 'host'));
}
