/**
 * What kind of address an IP is, for the outbound target policy (policy.ts). Pure: no DNS, no state.
 *
 * IPv4 ranges, first match wins:
 *   unspecified 0.0.0.0/8 · broadcast 255.255.255.255 and 240.0.0.0/4 · multicast 224.0.0.0/4 ·
 *   link-local 169.254.0.0/16 · metadata 100.100.100.200, 192.0.0.192, 168.63.129.16 · loopback 127.0.0.0/8 ·
 *   private 10/8, 172.16/12, 192.168/16, 198.18/15 (benchmark networks are local too) · cgnat 100.64.0.0/10.
 * IPv6: unspecified :: · loopback ::1 · metadata fd00:ec2::254 · link-local fe80::/10 · multicast ff00::/8 ·
 *   private fc00::/7 and the deprecated site-local fec0::/10.
 * IPv6 spellings of IPv4 are judged by the IPv4 address inside them: IPv4-mapped ::ffff:0:0/96,
 * IPv4-compatible ::/96, SIIT ::ffff:0:0:0/96, NAT64 64:ff9b::/96 and 64:ff9b:1::/48 (both the last
 * 32 bits and RFC 6052's /48 position), 6to4 2002::/16 (bits 16–47), Teredo 2001::/32 (server, bits
 * 32–63, and the inverted client, last 32 bits). When an address carries more than one candidate,
 * the strictest class wins, so no spelling is laxer than the address it reaches.
 */
import { isIP } from 'node:net';

/** Classes refused for every account. */
export const ALWAYS_REFUSED = ['link-local', 'metadata', 'multicast', 'broadcast', 'unspecified'] as const;
/** Classes allowed only for trusted accounts (`outbound.trusted_accounts`). */
export const LOCAL = ['loopback', 'private', 'cgnat'] as const;

export type AddressClass = 'public' | (typeof LOCAL)[number] | (typeof ALWAYS_REFUSED)[number];

export interface AddressInfo {
  class: AddressClass;
  /** The IPv4 address the class was taken from, when the address is an IPv6 spelling of one. */
  embedded?: string;
}

const DESCRIPTIONS: Record<AddressClass, string> = {
  public: 'a public address',
  loopback: 'a loopback address',
  private: 'a private address',
  cgnat: 'a carrier-grade NAT (100.64.0.0/10) address',
  'link-local': 'a link-local address',
  metadata: 'a cloud metadata address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast or reserved (240.0.0.0/4) address',
  unspecified: 'an unspecified address',
};

export function describeClass(kind: AddressClass): string {
  return DESCRIPTIONS[kind];
}

export function isAlwaysRefused(kind: AddressClass): boolean {
  return (ALWAYS_REFUSED as readonly string[]).includes(kind);
}

/** 2 = always refused, 1 = trusted accounts only, 0 = public. */
function strictness(kind: AddressClass): number {
  if (kind === 'public') return 0;
  return isAlwaysRefused(kind) ? 2 : 1;
}

// ── IPv4 ──────────────────────────────────────────────────────────────────────────────────────────

type V4Range = readonly [network: number, prefix: number, kind: AddressClass];

function v4(text: string): number {
  const parts = text.split('.').map(Number);
  return (((parts[0] ?? 0) << 24) | ((parts[1] ?? 0) << 16) | ((parts[2] ?? 0) << 8) | (parts[3] ?? 0)) >>> 0;
}

const V4_RANGES: readonly V4Range[] = (
  [
    ['0.0.0.0', 8, 'unspecified'],
    ['255.255.255.255', 32, 'broadcast'],
    ['240.0.0.0', 4, 'broadcast'],
    ['224.0.0.0', 4, 'multicast'],
    ['169.254.0.0', 16, 'link-local'],
    ['100.100.100.200', 32, 'metadata'], // Alibaba Cloud
    ['192.0.0.192', 32, 'metadata'], // Oracle Cloud
    ['168.63.129.16', 32, 'metadata'], // Azure wire server
    ['127.0.0.0', 8, 'loopback'],
    ['10.0.0.0', 8, 'private'],
    ['172.16.0.0', 12, 'private'],
    ['192.168.0.0', 16, 'private'],
    ['198.18.0.0', 15, 'private'],
    ['100.64.0.0', 10, 'cgnat'],
  ] as const
).map(([net, prefix, kind]) => [v4(net), prefix, kind] as const);

function classifyV4(ip: number): AddressClass {
  for (const [net, prefix, kind] of V4_RANGES) {
    // prefix ≥ 4 everywhere, so the shift is never by 32 (which JavaScript would treat as 0).
    if (ip >>> (32 - prefix) === net >>> (32 - prefix)) return kind;
  }
  return 'public';
}

function formatV4(ip: number): string {
  return `${ip >>> 24}.${(ip >>> 16) & 255}.${(ip >>> 8) & 255}.${ip & 255}`;
}

// ── IPv6 ──────────────────────────────────────────────────────────────────────────────────────────

/** The 128 bits of a valid IPv6 text (isIP(text) === 6, no zone, no brackets). */
function v6(text: string): bigint {
  // A trailing dotted quad (::ffff:1.2.3.4) is rewritten as its two groups first.
  let head = text;
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    const quad = v4(dotted[2] as string);
    head = `${dotted[1]}${(quad >>> 16).toString(16)}:${(quad & 0xffff).toString(16)}`;
  }
  const [left = '', right] = head.split('::') as [string, string | undefined];
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const l = groups(left);
  const r = right === undefined ? [] : groups(right);
  const all = right === undefined ? l : [...l, ...new Array<number>(8 - l.length - r.length).fill(0), ...r];
  let value = 0n;
  for (const group of all) value = (value << 16n) | BigInt(group);
  return value;
}

function v6Net(text: string, prefix: number): readonly [bigint, number] {
  return [v6(text), prefix];
}

function inV6(value: bigint, [net, prefix]: readonly [bigint, number]): boolean {
  const shift = BigInt(128 - prefix);
  return value >> shift === net >> shift;
}

const V6_RANGES: ReadonlyArray<readonly [readonly [bigint, number], AddressClass]> = [
  [v6Net('::', 128), 'unspecified'],
  [v6Net('::1', 128), 'loopback'],
  [v6Net('fd00:ec2::254', 128), 'metadata'], // AWS IMDS over IPv6
  [v6Net('fe80::', 10), 'link-local'],
  [v6Net('ff00::', 8), 'multicast'],
  [v6Net('fc00::', 7), 'private'],
  [v6Net('fec0::', 10), 'private'],
];

const MAPPED = v6Net('::ffff:0:0', 96);
const COMPATIBLE = v6Net('::', 96);
const SIIT = v6Net('::ffff:0:0:0', 96);
const NAT64 = v6Net('64:ff9b::', 96);
const NAT64_LOCAL = v6Net('64:ff9b:1::', 48);
const SIX_TO_FOUR = v6Net('2002::', 16);
const TEREDO = v6Net('2001::', 32);

const LOW32 = 0xffffffffn;

/** The IPv4 addresses an IPv6 address may stand for (empty when it embeds none). */
function embeddedV4(value: bigint): number[] {
  const low = Number(value & LOW32);
  if (inV6(value, MAPPED) || inV6(value, COMPATIBLE) || inV6(value, SIIT) || inV6(value, NAT64)) return [low];
  if (inV6(value, NAT64_LOCAL)) {
    // RFC 6052 /48 layout: v4 bits 0–15 at 48–63, bits 16–31 at 72–87 (bits 64–71 are the zero "u" octet).
    const hi = Number((value >> 64n) & 0xffffn);
    const lo = Number((value >> 40n) & 0xffffn);
    return [low, ((hi << 16) | lo) >>> 0];
  }
  if (inV6(value, SIX_TO_FOUR)) return [Number((value >> 80n) & LOW32)];
  if (inV6(value, TEREDO)) return [Number((value >> 64n) & LOW32), ~low >>> 0];
  return [];
}

function classifyV6(value: bigint): AddressInfo {
  for (const [range, kind] of V6_RANGES) if (inV6(value, range)) return { class: kind };
  let worst: AddressInfo = { class: 'public' };
  for (const ip of embeddedV4(value)) {
    const kind = classifyV4(ip);
    if (strictness(kind) > strictness(worst.class)) worst = { class: kind, embedded: formatV4(ip) };
  }
  return worst;
}

/**
 * The class of an IP address (IPv6 with or without brackets and zone), or undefined when `text` is not
 * an IP address. Only canonical dotted-quad IPv4 counts: shorthand forms (`0x7f.1`, `2130706433`) are
 * host names here; WHATWG URL parsing turns them into dotted quads before the policy sees a URL's host.
 */
export function classifyAddress(text: string): AddressInfo | undefined {
  const bare = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return { class: classifyV4(v4(bare)) };
  if (family === 6) return classifyV6(v6(bare.toLowerCase()));
  return undefined;
}
