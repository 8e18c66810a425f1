/**
 * The origin address model: one parser, one canonical form, one request target, one masking.
 *
 * Accepted forms (anything else is refused with a message saying what to fix):
 * - `scheme://[user[:password]@]host[:port][/path][?query]` with scheme http or https (the list is a
 *   parameter, so `ws_address` can accept ws/wss through the same code);
 * - a bare `host[:port]` with NOTHING after it, meaning `http://host[:port]/` (SPEC §4), only where http
 *   is one of the schemes (a `ws_address` always names ws:// or wss://). Userinfo, a
 *   path, a query or a fragment without a scheme are refused: older versions read
 *   `user:pw@host/v3/KEY` as a bare host and then showed it unmasked.
 * Hosts are DNS names (letters, digits, `.`, `-`, `_`), IPv4 or bracketed IPv6 literals; ports 1-65535.
 * No control characters (CR, LF, NUL, tab, DEL), spaces or backslashes anywhere; no fragment.
 *
 * Canonical form (what is stored and compared): the WHATWG serialisation — lower-case scheme and host,
 * the scheme's default port dropped, percent-encoding and `.`/`..` segments normalised — except that
 * nothing is added: an address written without a path stays without one (`http://h:8545`, not
 * `http://h:8545/`), and a bare `host[:port]` stays bare (Cloudflare's own shape, so clients that send
 * `10.0.0.5:8545` read back what they wrote). Either way the request path is `/`.
 *
 * The request target (`originTarget`) is built from the canonical form alone and used by the gateway and
 * by every probe: path + query exactly as stored (`/` when empty, never a `/` appended), Basic auth from
 * the userinfo (percent-decoded, UTF-8), `Host` = host[:port].
 *
 * Masking (`maskAddress`, the only one; every output path — API, health keys, events, alerts, history,
 * email, logs — goes through it): user and password, every query value (a query item without a value,
 * or whose name looks like a key, as a whole), and key-like path segments (24+ hex or 32+ base64url characters, the shapes providers use) become
 * `***`. It never throws and is idempotent; an unparseable value is shown as `***`.
 *
 * Secrets are bound to their destination (scheme, host, port): `unmaskAddress` resolves a `***` sent
 * back by a client to the stored part at the same place only while the destination is unchanged.
 */
export const MASK = '***';

/** Schemes of origin addresses. */
export const HTTP_SCHEMES: readonly string[] = ['http:', 'https:'];
/** Schemes of an origin's `ws_address` (its newHeads push endpoint, SPEC §9). */
export const WS_SCHEMES: readonly string[] = ['ws:', 'wss:'];

const KEY_LIKE = /[0-9a-fA-F]{24,}|[A-Za-z0-9_-]{32,}/;
const SCHEME_FORM = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/;
const HOST_PORT = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?|[A-Za-z0-9])(?::([0-9]{1,5}))?$/;

/** Why an address was refused; the message never repeats the address (it may hold a key). */
export class AddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AddressError';
  }
}

/** The raw parts of an address, split without decoding (`path` and `query` as written, query without `?`). */
interface Parts {
  scheme: string | undefined;
  userinfo: string | undefined;
  hostPort: string;
  path: string;
  query: string | undefined;
  fragment: string | undefined;
}

function split(address: string): Parts {
  const m = SCHEME_FORM.exec(address);
  if (m === null)
    return {
      scheme: undefined,
      userinfo: undefined,
      hostPort: address,
      path: '',
      query: undefined,
      fragment: undefined,
    };
  const authority = m[2] as string;
  const at = authority.lastIndexOf('@');
  return {
    scheme: `${(m[1] as string).toLowerCase()}:`,
    userinfo: at === -1 ? undefined : authority.slice(0, at),
    hostPort: at === -1 ? authority : authority.slice(at + 1),
    path: m[3] as string,
    query: m[4]?.slice(1),
    fragment: m[5],
  };
}

/** CR, LF, NUL, tab and every other C0 control, DEL, space, or a backslash (WHATWG reads `\` as `/`). */
export function hasForbiddenCharacters(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f || c === 0x5c) return true;
  }
  return false;
}

function checkPort(port: string | undefined): void {
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
    throw new AddressError('the port must be 1-65535');
  }
}

/**
 * The canonical form of an origin address (see the header), or an AddressError saying what to fix.
 * `schemes` lists the accepted schemes with their colon.
 */
export function normaliseAddress(input: string, schemes: readonly string[] = HTTP_SCHEMES): string {
  if (input === '') throw new AddressError('must not be empty');
  if (hasForbiddenCharacters(input)) {
    throw new AddressError('must not contain control characters (CR, LF, NUL, tab, …), spaces or backslashes');
  }
  const names = schemes.map((scheme) => scheme.slice(0, -1)).join(' or ');
  const example = (schemes[0] ?? 'http:').slice(0, -1);
  const parts = split(input);
  if (parts.scheme === undefined) {
    // A bare host[:port] means http://, so it is an address only where http is allowed.
    if (!schemes.includes('http:')) throw new AddressError(`must start with ${names}://`);
    if (input.includes('://')) throw new AddressError(`must start with ${names}:// or be a bare host[:port]`);
    if (input.includes('@')) {
      throw new AddressError(
        `credentials (user:password@) need a scheme (${names}): write ${example}://user:password@host[:port]/…`,
      );
    }
    if (/[/?#]/.test(input)) {
      throw new AddressError(
        `a path or query needs a scheme (${names}): write ${example}://host[:port]/path?query; a bare address is host[:port] only`,
      );
    }
    const bare = HOST_PORT.exec(input);
    if (bare === null) throw new AddressError('must be a bare host[:port] (DNS name, IPv4 or [IPv6])');
    checkPort(bare[1]);
    return new URL(`http://${input}`).host;
  }
  if (!schemes.includes(parts.scheme)) throw new AddressError(`the scheme must be ${names}`);
  if (parts.fragment !== undefined) throw new AddressError('a fragment (#…) is never sent to the origin; remove it');
  const hostPort = HOST_PORT.exec(parts.hostPort);
  if (hostPort === null) throw new AddressError('needs a host (DNS name, IPv4 or [IPv6]) after the scheme');
  checkPort(hostPort[1]);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new AddressError('is not a valid URL');
  }
  const userinfo =
    url.username === '' && url.password === ''
      ? ''
      : `${url.username}${url.password === '' ? '' : `:${url.password}`}@`;
  const path = parts.path === '' ? '' : url.pathname;
  return `${url.protocol}//${userinfo}${url.host}${path}${url.search}`;
}

/** The problem with an address, or undefined when it is acceptable (for schema refinements). */
export function addressProblem(input: string, schemes: readonly string[] = HTTP_SCHEMES): string | undefined {
  try {
    normaliseAddress(input, schemes);
    return undefined;
  } catch (err) {
    if (err instanceof AddressError) return err.message;
    throw err;
  }
}

/** Where a request to an address goes and what it carries (the gateway and every probe use this). */
export interface AddressTarget {
  /** `https:` or `http:` (or a later scheme), with the colon. */
  readonly scheme: string;
  readonly tls: boolean;
  /** Host name or IP (IPv6 without brackets), for sockets and SNI. */
  readonly hostname: string;
  readonly port: number;
  /** The `Host` header: host[:port] as in the address (IPv6 in brackets, default port omitted). */
  readonly host: string;
  /** scheme://host:port with the port always written: what secrets are bound to. */
  readonly destination: string;
  /** Path and query exactly as stored; `/` when the address has no path. */
  readonly path: string;
  /** `Basic …` from the address's user:password, if it has any. */
  readonly authorization: string | undefined;
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'ws:': 80, 'wss:': 443 };

/** A URL for any stored address: a bare host[:port] reads as http://host[:port]. Throws TypeError. */
function toUrl(address: string): URL {
  return new URL(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(address) ? address : `http://${address}`);
}

/**
 * The request target of a stored (canonical) address. Throws a TypeError for an address no version
 * accepted (only a hand-edited row can hold one); the gateway then fails the attempt like a refused
 * connection.
 */
export function originTarget(address: string): AddressTarget {
  const url = toUrl(address);
  const port = url.port === '' ? DEFAULT_PORTS[url.protocol] : Number(url.port);
  if (port === undefined || url.hostname === '')
    throw new TypeError(`unusable origin address (scheme ${url.protocol})`);
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const secure = url.protocol === 'https:' || url.protocol === 'wss:';
  let authorization: string | undefined;
  if (url.username !== '' || url.password !== '') {
    const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    authorization = `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
  }
  return {
    scheme: url.protocol,
    tls: secure,
    hostname,
    port,
    host: url.host,
    destination: `${url.protocol}//${url.hostname}:${port}`,
    path: `${url.pathname}${url.search}`,
    authorization,
  };
}

/**
 * The stored address as a URL without userinfo (credentials travel as the Authorization header only).
 * For HTTP clients that take a URL (the probes); the gateway writes `originTarget` itself.
 */
export function originUrl(address: string): URL {
  const url = toUrl(address);
  url.username = '';
  url.password = '';
  return url;
}

/** scheme://host:port of an address, or undefined when it cannot be read. */
export function destinationOf(address: string): string | undefined {
  try {
    return originTarget(address).destination;
  } catch {
    return undefined;
  }
}

function maskPath(path: string): string {
  return path
    .split('/')
    .map((segment) => (KEY_LIKE.test(segment) ? MASK : segment))
    .join('/');
}

/** One query item masked: `name=***`, or `***` whole when it has no value or its name looks like a key. */
function maskItem(item: string): string {
  if (item === '') return '';
  const eq = item.indexOf('=');
  if (eq === -1 || eq === item.length - 1 || KEY_LIKE.test(item.slice(0, eq))) return MASK;
  return `${item.slice(0, eq)}=${MASK}`;
}

function maskQuery(query: string): string {
  return query.split('&').map(maskItem).join('&');
}

/**
 * The address fit to show anywhere (see the header). Non-secret parts are kept exactly as stored, so a
 * health key equals the `address` the pools API shows for the same origin.
 */
export function maskAddress(address: string): string {
  if (address === MASK) return MASK;
  const parts = split(address);
  if (parts.scheme === undefined) {
    // A bare host[:port] has nothing to hide. Anything else without a scheme (a row written by an older
    // version) is read the way the old gateway did, as http://…, and masked as such.
    return HOST_PORT.test(address)
      ? address
      : hasForbiddenCharacters(address)
        ? MASK
        : maskAddress(`http://${address}`);
  }
  if (hasForbiddenCharacters(address)) return MASK;
  const userinfo =
    parts.userinfo === undefined
      ? ''
      : `${parts.userinfo
          .split(':')
          .slice(0, 2)
          .map((part) => (part === '' ? '' : MASK))
          .join(':')}@`;
  const query = parts.query === undefined ? '' : `?${maskQuery(parts.query)}`;
  const fragment = parts.fragment === undefined ? '' : `#${MASK}`;
  return `${parts.scheme}//${userinfo}${parts.hostPort}${maskPath(parts.path)}${query}${fragment}`;
}

/** True when `maskAddress` hides something of the address: it holds a secret (the store seals it). */
export function holdsSecrets(address: string): boolean {
  return maskAddress(address) !== address;
}

export function isMasked(address: string): boolean {
  return address.includes(MASK);
}

export type Unmasked = { address: string } | { refused: 'destination' | 'missing' };

/**
 * An address sent by a client with `***` in it, resolved against the stored address of the same object:
 * each `***` (user, password, a query value — matched by name and occurrence —, or a whole path segment —
 * matched by position) takes the stored part at that place. Refused with `destination` when the sent
 * address names another scheme/host/port than the stored one (the secret stays with its destination),
 * with `missing` when a `***` has no stored secret behind it. The result still has to be normalised.
 */
export function unmaskAddress(sent: string, stored: string | undefined): Unmasked {
  if (stored === undefined) return { refused: 'missing' };
  const before = split(stored);
  const after = split(sent);
  if (after.scheme === undefined) return { refused: 'missing' };
  let sentDestination: string | undefined;
  try {
    sentDestination = originTarget(sent.replaceAll(MASK, 'x')).destination;
  } catch {
    return { refused: 'missing' };
  }
  if (sentDestination !== destinationOf(stored)) return { refused: 'destination' };
  const storedBefore = before.scheme === undefined ? split(`http://${stored}`) : before;

  let userinfo = '';
  if (after.userinfo !== undefined) {
    const storedInfo = (storedBefore.userinfo ?? '').split(':');
    const sentInfo = after.userinfo.split(':');
    const resolved: string[] = [];
    for (const [i, part] of sentInfo.entries()) {
      if (part !== MASK) {
        if (part.includes(MASK)) return { refused: 'missing' };
        resolved.push(part);
        continue;
      }
      const kept = storedInfo[i];
      if (kept === undefined || kept === '') return { refused: 'missing' };
      resolved.push(kept);
    }
    userinfo = `${resolved.join(':')}@`;
  }

  const storedSegments = storedBefore.path.split('/');
  const segments: string[] = [];
  for (const [i, segment] of after.path.split('/').entries()) {
    if (segment !== MASK) {
      if (segment.includes(MASK)) return { refused: 'missing' };
      segments.push(segment);
      continue;
    }
    const kept = storedSegments[i];
    if (kept === undefined || !KEY_LIKE.test(kept)) return { refused: 'missing' };
    segments.push(kept);
  }

  let query = '';
  if (after.query !== undefined) {
    const storedItems = (storedBefore.query ?? '').split('&');
    const seen = new Map<string, number>();
    const items: string[] = [];
    for (const item of after.query.split('&')) {
      const eq = item.indexOf('=');
      const name = eq === -1 ? undefined : item.slice(0, eq);
      const value = eq === -1 ? item : item.slice(eq + 1);
      if (value !== MASK) {
        if (item.includes(MASK)) return { refused: 'missing' };
        items.push(item);
        continue;
      }
      if (name === undefined) {
        // A whole `***` item: the n-th stored item that is shown whole as `***` (no value, key-like name).
        const n = seen.get('') ?? 0;
        seen.set('', n + 1);
        const kept = storedItems.filter((stored) => maskItem(stored) === MASK)[n];
        if (kept === undefined) return { refused: 'missing' };
        items.push(kept);
        continue;
      }
      const n = seen.get(`=${name}`) ?? 0;
      seen.set(`=${name}`, n + 1);
      const kept = storedItems.filter((stored) => stored.startsWith(`${name}=`))[n];
      if (kept === undefined) return { refused: 'missing' };
      items.push(kept);
    }
    query = `?${items.join('&')}`;
  }
  if (after.hostPort.includes(MASK) || after.fragment !== undefined) return { refused: 'missing' };
  return { address: `${after.scheme}//${userinfo}${after.hostPort}${segments.join('/')}${query}` };
}
