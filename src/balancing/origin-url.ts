/**
 * An origin's `address` as a URL. SPEC §4: a node URL `http(s)://host:port/path`, or a bare `host[:port]`
 * meaning `http://host:port/`. The result may carry credentials in its path or query (provider API keys):
 * log it only through `redactUrl`.
 */
export function originUrl(address: string): URL {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(address) ? address : `http://${address}`;
  const url = new URL(withScheme);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`origin address must be http(s)://… or host[:port], got scheme ${url.protocol}`);
  }
  return url;
}

/** True when `address` parses as an origin URL. */
export function isOriginAddress(address: string): boolean {
  try {
    originUrl(address);
    return true;
  } catch {
    return false;
  }
}
