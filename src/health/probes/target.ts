import type { Origin } from '../../balancing/model.js';
import type { MonitorSettings } from '../monitor-schema.js';

/**
 * Where a check goes. An origin's `address` is a node URL (`http(s)://host:port/path`) or a bare
 * `host[:port]` meaning `http://host:port/`.
 * - http/https monitors: the monitor's scheme (`type`), the origin's host, the monitor's `port` (0 = the
 *   port the address names, else the scheme default) and `path`.
 * - jsonrpc monitors: the origin's own URL (its path may carry a provider key), `port` overriding when set.
 * Headers: the origin's `header` first, then the monitor's `header` (the monitor wins on the same name).
 */
export function originUrl(address: string): URL {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(address) ? new URL(address) : new URL(`http://${address}/`);
}

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

export function checkHeaders(origin: Origin, monitor: MonitorSettings): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  const add = (source: Record<string, string[]>) => {
    for (const [name, values] of Object.entries(source)) {
      for (const existing of Object.keys(headers)) {
        if (existing.toLowerCase() === name.toLowerCase()) delete headers[existing];
      }
      headers[name] = values.length === 1 ? (values[0] as string) : values;
    }
  };
  add(origin.header ?? {});
  add(monitor.header);
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'user-agent')) {
    headers['user-agent'] = 'Switchyard-Health-Monitor';
  }
  return headers;
}
