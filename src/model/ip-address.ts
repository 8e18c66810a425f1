/**
 * IP addresses and CIDR ranges as the gateway's edge reads them (`gateway.trusted_proxies`, the client
 * address of docs/gateway.md "Behind a proxy"). Pure string work, no `node:net`: `net.BlockList.check`
 * costs about 2 µs a call, and the peer of every request is checked when trusted proxies are set.
 *
 * - IPv4 is dotted quad only (`1.2.3.4`; no leading zeros, no shorthand such as `127.1`).
 * - IPv6 is RFC 4291 text (`::`, an embedded dotted quad at the end); a zone (`%eth0`) is refused.
 * - An IPv4-mapped IPv6 address (`::ffff:1.2.3.4`, as Node reports IPv4 peers of a dual-stack listener)
 *   is the IPv4 address; an IPv4 address also matches IPv6 ranges through its mapped form.
 * - Canonical text: dotted quad, or RFC 5952 IPv6 (lowercase, no leading zeros, the longest run of two
 *   or more zero groups as `::`, the first on a tie).
 * - A range is `address/prefix` or a single address (/32, /128); bits set past the prefix are refused
 *   (`10.0.0.1/8` is more likely a typo than a range).
 */

/** A parsed address: IPv4 as one unsigned 32-bit number, IPv6 as eight 16-bit groups. */
export type IpAddress =
  | { readonly v4: number; readonly v6?: undefined }
  | { readonly v4?: undefined; readonly v6: readonly number[] };

const MAX_V6_TEXT = 45; // ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255

/**
 * `1.2.3.4` (from `from` to `to` in `text`) as a number, or -1 when it is not a dotted quad. A dotted
 * quad this accepts is already in canonical form.
 */
export function parseV4(text: string, from = 0, to = text.length): number {
  let value = 0;
  let parts = 0;
  let octet = -1;
  let digits = 0;
  for (let i = from; i <= to; i += 1) {
    const c = i === to ? 46 : text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || parts === 4) return -1;
      value = value * 256 + octet;
      parts += 1;
      octet = -1;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits === 3 || (digits === 1 && octet === 0)) return -1; // too long, or a leading zero
      octet = (octet === -1 ? 0 : octet * 10) + (c - 48);
      if (octet > 255) return -1;
      digits += 1;
    } else {
      return -1;
    }
  }
  return parts === 4 ? value : -1;
}

/** Hex groups of one side of `::` into `out`; false when a group is malformed. */
function pushGroups(text: string, out: number[], last: boolean): boolean {
  if (text === '') return true;
  const pieces = text.split(':');
  for (let p = 0; p < pieces.length; p += 1) {
    const piece = pieces[p] as string;
    if (last && p === pieces.length - 1 && piece.includes('.')) {
      const v4 = parseV4(piece);
      if (v4 < 0) return false;
      out.push(Math.floor(v4 / 65536), v4 % 65536);
      return true;
    }
    if (!/^[0-9a-fA-F]{1,4}$/.test(piece)) return false;
    out.push(Number.parseInt(piece, 16));
  }
  return true;
}

function parseV6(text: string): number[] | undefined {
  if (text.length < 2 || text.length > MAX_V6_TEXT) return undefined;
  const gap = text.indexOf('::');
  const head: number[] = [];
  const tail: number[] = [];
  if (gap === -1) {
    if (!pushGroups(text, head, true) || head.length !== 8) return undefined;
    return head;
  }
  if (text.indexOf('::', gap + 1) !== -1) return undefined;
  if (!pushGroups(text.slice(0, gap), head, false) || !pushGroups(text.slice(gap + 2), tail, true)) return undefined;
  // `::` stands for at least one zero group.
  const zeros = 8 - head.length - tail.length;
  if (zeros < 1) return undefined;
  return [...head, ...new Array<number>(zeros).fill(0), ...tail];
}

/** The IPv4 address of `text` when it is a dotted quad or `::ffff:` and one (Node's IPv4 peers on `::`), else -1. */
function quickV4(text: string): number {
  if (text.charCodeAt(0) !== 58) return text.includes(':') ? -1 : parseV4(text);
  return text.startsWith('::ffff:') && text.indexOf(':', 7) === -1 ? parseV4(text, 7) : -1;
}

/** The address `text` spells, or undefined. IPv4-mapped IPv6 comes back as IPv4. */
export function parseIp(text: string): IpAddress | undefined {
  const quick = quickV4(text);
  if (quick >= 0) return { v4: quick };
  if (!text.includes(':')) return undefined;
  const groups = parseV6(text);
  if (groups === undefined) return undefined;
  if (
    groups[5] === 0xffff &&
    groups[0] === 0 &&
    groups[1] === 0 &&
    groups[2] === 0 &&
    groups[3] === 0 &&
    groups[4] === 0
  ) {
    return { v4: (groups[6] as number) * 65536 + (groups[7] as number) };
  }
  return { v6: groups };
}

/** Canonical text: dotted quad, or RFC 5952 IPv6. */
export function formatIp(address: IpAddress): string {
  if (address.v4 !== undefined) {
    const n = address.v4;
    return `${Math.floor(n / 16_777_216)}.${Math.floor(n / 65_536) % 256}.${Math.floor(n / 256) % 256}.${n % 256}`;
  }
  const groups = address.v6;
  // The longest run of zero groups (length ≥ 2, first on a tie) becomes `::`.
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j += 1;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (from: number, to: number): string =>
    groups
      .slice(from, to)
      .map((g) => g.toString(16))
      .join(':');
  if (bestStart === -1) return hex(0, 8);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLength, 8)}`;
}

/** The IPv6 groups of an address (IPv4 as ::ffff:a.b.c.d). */
function groupsOf(address: IpAddress): readonly number[] {
  if (address.v6 !== undefined) return address.v6;
  return [0, 0, 0, 0, 0, 0xffff, Math.floor(address.v4 / 65536), address.v4 % 65536];
}

interface V4Block {
  readonly network: number;
  /** Addresses in the range share their top `prefix` bits with `network`. */
  readonly size: number;
}

interface V6Block {
  readonly groups: readonly number[];
  readonly prefix: number;
}

/** A CIDR range as written, or why it is not one. */
export function parseCidr(
  text: string,
): { ok: true; address: IpAddress; prefix: number } | { ok: false; message: string } {
  const slash = text.indexOf('/');
  const address = parseIp(slash === -1 ? text : text.slice(0, slash));
  const v4Text = address?.v4 !== undefined && !text.slice(0, slash === -1 ? undefined : slash).includes(':');
  if (address === undefined)
    return { ok: false, message: 'must be an IPv4 or IPv6 address or range (CIDR), e.g. 10.0.0.0/8 or fd00::/8' };
  const max = v4Text ? 32 : 128;
  let prefix = max;
  if (slash !== -1) {
    const bits = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) {
      return { ok: false, message: `the prefix length after "/" must be 0 to ${max}` };
    }
    prefix = Number(bits);
  }
  // An IPv6 spelling of an IPv4 address keeps its IPv6 prefix: compare as groups.
  const groups = groupsOf(address);
  const v6Prefix = v4Text ? prefix + 96 : prefix;
  if (!hostBitsClear(groups, v6Prefix)) {
    return { ok: false, message: `has address bits set past the /${prefix} prefix (write the range's first address)` };
  }
  return { ok: true, address, prefix: v6Prefix };
}

function hostBitsClear(groups: readonly number[], prefix: number): boolean {
  for (let i = 0; i < 8; i += 1) {
    const keep = Math.max(0, Math.min(16, prefix - 16 * i));
    const hostMask = 0xffff >> keep;
    if (((groups[i] as number) & hostMask) !== 0) return false;
  }
  return true;
}

function inV6Block(groups: readonly number[], range: V6Block): boolean {
  for (let i = 0; i < 8; i += 1) {
    const bits = Math.min(16, range.prefix - 16 * i);
    if (bits <= 0) return true;
    const mask = (0xffff << (16 - bits)) & 0xffff;
    if ((((groups[i] as number) ^ (range.groups[i] as number)) & mask) !== 0) return false;
  }
  return true;
}

/** A set of CIDR ranges (e.g. `gateway.trusted_proxies`), checked without allocation for IPv4. */
export class AddressRanges {
  readonly #v4: V4Block[] = [];
  readonly #v6: V6Block[] = [];

  /** Throws on an entry that is not a range; the config schema checks each entry first. */
  constructor(cidrs: readonly string[]) {
    for (const text of cidrs) {
      const parsed = parseCidr(text);
      if (!parsed.ok) throw new Error(`${JSON.stringify(text)} ${parsed.message}`);
      const groups = groupsOf(parsed.address);
      // Ranges inside ::ffff:0:0/96 are IPv4 ranges (an IPv4 address is matched by number).
      if (parsed.prefix >= 96 && parsed.address.v4 !== undefined) {
        const bits = parsed.prefix - 96;
        this.#v4.push({ network: parsed.address.v4, size: 2 ** (32 - bits) });
      } else {
        this.#v6.push({ groups, prefix: parsed.prefix });
      }
    }
  }

  get empty(): boolean {
    return this.#v4.length === 0 && this.#v6.length === 0;
  }

  has(address: IpAddress): boolean {
    if (address.v4 !== undefined) return this.hasV4(address.v4);
    for (const range of this.#v6) if (inV6Block(address.v6, range)) return true;
    return false;
  }

  /** The IPv4 address `v4` (a number, as parseV4 makes it) is inside one of the ranges. */
  hasV4(v4: number): boolean {
    for (const range of this.#v4) {
      if (v4 - (v4 % range.size) === range.network) return true;
    }
    if (this.#v6.length === 0) return false;
    const groups = groupsOf({ v4 });
    for (const range of this.#v6) if (inV6Block(groups, range)) return true;
    return false;
  }

  /** `text` is an address inside one of the ranges (false for anything that is not an address). */
  contains(text: string): boolean {
    // The usual peer, IPv4 (or IPv4-mapped), is checked without allocating.
    const quick = quickV4(text);
    if (quick >= 0) return this.hasV4(quick);
    const address = parseIp(text);
    return address !== undefined && this.has(address);
  }
}
