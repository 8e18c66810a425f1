/**
 * Origin addresses often carry provider API keys (in the path, the query or as user:password). They are
 * never shown as stored — not by the API, not in health reports, events, alerts or logs: each secret
 * part is shown as `***` (user, password, every query value, fragment, key-like path segments — 24+ hex
 * or 32+ base64url characters, the shapes providers use). It lives here, beside the model, because
 * every layer that shows an origin (api/, health/, notifications/) needs the same masking.
 *
 * So that a client can GET a pool, change something and PUT it back, an address sent with `***` in it
 * means "keep the stored address": it is accepted when it equals the masked form of the stored address
 * of the origin with the same name, and refused otherwise (a masked value cannot be written).
 */
const MASK = '***';
const KEY_LIKE = /[0-9a-fA-F]{24,}|[A-Za-z0-9_-]{32,}/;

export function maskAddress(address: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(address)) return address;
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return MASK;
  }
  const path = url.pathname
    .split('/')
    .map((segment) => (KEY_LIKE.test(segment) ? MASK : segment))
    .join('/');
  const secretUser = url.username !== '' || url.password !== '';
  const secretQuery = url.search !== '';
  if (!secretUser && !secretQuery && url.hash === '' && path === url.pathname) return address;
  const user = secretUser ? `${url.username === '' ? '' : MASK}${url.password === '' ? '' : `:${MASK}`}@` : '';
  const query = secretQuery ? `?${[...url.searchParams.keys()].map((key) => `${key}=${MASK}`).join('&')}` : '';
  return `${url.protocol}//${user}${url.host}${path}${query}${url.hash === '' ? '' : `#${MASK}`}`;
}

export function isMasked(address: string): boolean {
  return address.includes(MASK);
}
