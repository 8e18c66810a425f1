/**
 * The outbound target rules for one account, and the checks that need no DNS: a URL's scheme and
 * host, a literal IP, a host name. The DNS side (names resolved at connect time) is policy.ts.
 *
 * - Schemes: http and https (a caller may allow ws/wss, e.g. for `ws_address`).
 * - Always refused (every account): link-local, cloud metadata (addresses and the names
 *   metadata.google.internal, metadata.goog, metadata, instance-data, instance-data.ec2.internal),
 *   multicast, broadcast/240.0.0.0/4, unspecified — in every IPv6 spelling (address.ts).
 * - Loopback (also the names localhost, *.localhost, localhost.localdomain, ip6-localhost,
 *   ip6-loopback), private and CGNAT: allowed only when the rules allow local targets (the account
 *   is in `outbound.trusted_accounts`, and for webhooks `webhooks.deny_private` is false).
 * - IPv4 shorthand (`2130706433`, `0x7f.1`, `017700000001`) is judged by what WHATWG URL parsing makes
 *   of it (127.0.0.1): the checks take parsed URLs, never raw host text from a request.
 * Every refusal is a TargetRefusedError whose message starts "target not allowed:" and names the host
 * and why — never the URL's credentials, path or query.
 */
import { isIP } from 'node:net';
import { type AddressClass, classifyAddress, describeClass, isAlwaysRefused } from './address.js';

export type Scheme = 'http:' | 'https:' | 'ws:' | 'wss:';
export const HTTP_SCHEMES: readonly Scheme[] = ['http:', 'https:'];
/** An origin's `ws_address` (its newHeads push endpoint): checked with these instead of HTTP_SCHEMES. */
export const WS_SCHEMES: readonly Scheme[] = ['ws:', 'wss:'];

export interface TargetRules {
  /** Loopback, private and CGNAT targets are allowed. */
  readonly allowLocal: boolean;
  /** Why local targets are refused when `allowLocal` is false (shown in refusals). */
  readonly localRefusal: string;
  readonly schemes: readonly Scheme[];
}

export const NOT_TRUSTED = 'allowed only for accounts in outbound.trusted_accounts';
export const DENY_PRIVATE = 'refused because webhooks.deny_private is true';

/** A refused target; the message is safe to show (the host and the reason, never credentials or query). */
export class TargetRefusedError extends Error {
  override readonly name = 'TargetRefusedError';
  readonly code = 'ETARGETREFUSED';

  constructor(reason: string) {
    super(`target not allowed: ${reason}`);
  }
}

const METADATA_NAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
]);
const LOOPBACK_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback']);

/** The class a host name implies by itself (before any DNS), if any. */
function classifyName(host: string): AddressClass | undefined {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (METADATA_NAMES.has(name)) return 'metadata';
  if (LOOPBACK_NAMES.has(name) || name.endsWith('.localhost')) return 'loopback';
  return undefined;
}

/** Why a target of this class is refused under `rules`, or undefined when it is allowed. */
function refusalOf(kind: AddressClass, rules: TargetRules): string | undefined {
  if (kind === 'public') return undefined;
  if (isAlwaysRefused(kind)) return `${describeClass(kind)} (always refused)`;
  return rules.allowLocal ? undefined : `${describeClass(kind)} (${rules.localRefusal})`;
}

/**
 * What makes an IP address refused under `rules` ("a link-local address (always refused)", "an IPv6
 * form of 127.0.0.1, a loopback address (…)"), or undefined when it is allowed.
 */
export function addressRefusal(text: string, rules: TargetRules): string | undefined {
  const info = classifyAddress(text);
  if (info === undefined) return 'not an IP address';
  const why = refusalOf(info.class, rules);
  if (why === undefined) return undefined;
  return info.embedded === undefined ? why : `an IPv6 form of ${info.embedded}, ${why}`;
}

/**
 * Why a host (a literal IP, with or without brackets, or a name) is refused by itself, or undefined.
 * Names pass unless they are obviously local or metadata services; their addresses are checked when
 * they are resolved (policy.ts).
 */
export function hostRefusal(host: string, rules: TargetRules): string | undefined {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (isIP(bare.replace(/%.*$/, '')) !== 0) {
    const why = addressRefusal(bare, rules);
    return why === undefined ? undefined : `${bare} is ${why}`;
  }
  const kind = classifyName(bare);
  if (kind === undefined) return undefined;
  const why = refusalOf(kind, rules);
  return why === undefined
    ? undefined
    : `${bare.toLowerCase()} is ${kind === 'metadata' ? 'a cloud metadata service (always refused)' : why}`;
}

/** Throws TargetRefusedError when a host is refused by itself (see hostRefusal). */
export function checkHost(host: string, rules: TargetRules): void {
  const why = hostRefusal(host, rules);
  if (why !== undefined) throw new TargetRefusedError(why);
}

/**
 * Parses and checks a target URL: an allowed scheme, a host, and a host refused by neither its
 * address nor its name. Returns the parsed URL; throws TargetRefusedError.
 */
export function checkUrl(target: string | URL, rules: TargetRules): URL {
  let url: URL;
  try {
    url = typeof target === 'string' ? new URL(target) : target;
  } catch {
    throw new TargetRefusedError(`not an absolute ${schemeList(rules)} URL`);
  }
  if (!(rules.schemes as readonly string[]).includes(url.protocol)) {
    throw new TargetRefusedError(`scheme ${url.protocol.replace(/:$/, '')} (only ${schemeList(rules)})`);
  }
  if (url.hostname === '') throw new TargetRefusedError('the URL has no host');
  const why = hostRefusal(url.hostname, rules);
  if (why !== undefined) throw new TargetRefusedError(`host ${why}`);
  return url;
}

function schemeList(rules: TargetRules): string {
  return rules.schemes.map((scheme) => scheme.replace(/:$/, '')).join(', ');
}
