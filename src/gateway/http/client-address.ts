/**
 * The client address of a request (`gateway.trusted_proxies`, SPEC §11; docs/gateway.md "Behind a
 * proxy"): what rate-limit buckets, WebSocket connections per client, read-your-writes and `hash`
 * steering key on when the call carries no API key.
 *
 * - The TCP peer, unless it lies inside one of the trusted ranges. Then the forwarding headers count:
 *   `Forwarded` (RFC 7239, its `for=` parameter) when the request has a non-blank one, else
 *   `X-Forwarded-For`. Their hops are walked from the right (the nearest proxy's entry first), over every
 *   field line of that header in order, skipping hops inside the trusted ranges; the first hop that is
 *   not trusted is the client. When every hop is trusted, the leftmost is.
 * - A hop is an IPv4 address (optionally `:port`), an IPv6 address (`[…]`, optionally `:port`; bare in
 *   X-Forwarded-For), or an obfuscated identifier (`_abc`, RFC 7239 §6.3), which is used as it is: the
 *   proxy's stable label for a client it does not name.
 * - Falls back to the peer: `unknown` or a `Forwarded` element without `for=` reached before any
 *   untrusted hop, a malformed hop or element, an element over 256 characters, more than 32 hops to walk
 *   (the header is 16 KiB at most, but the work stays bounded whatever the header holds), no hop at all.
 * Addresses taken from a header are in canonical form (IPv4-mapped IPv6 as IPv4, RFC 5952 IPv6); the
 * peer is as the socket reports it. Nothing here throws for anything a client sends.
 */
import type { ServerExchange } from '../../http1/index.js';
import { type AddressRanges, formatIp, parseIp, parseV4 } from '../../model/ip-address.js';

/** Hops walked at most, from the right, before giving up on a header. */
export const MAX_HOPS = 32;
/** Characters of one hop (one list element) at most. */
export const MAX_ELEMENT_LENGTH = 256;

/** The field lines (values) of the forwarding headers, in arrival order. */
export interface ForwardingHeaders {
  readonly forwarded: readonly string[];
  readonly xForwardedFor: readonly string[];
}

/** One hop: an address, an obfuscated identifier, or `unknown`; undefined when malformed. */
type Hop = { readonly address: string; readonly trusted: boolean } | { readonly unknown: true };

const COMMA = 44;
const UNDERSCORE = 95;
const TOKEN_OR_BRACKETS = /^[!#$%&'*+.^_`|~0-9A-Za-z:[\]-]+$/;
const OBFUSCATED = /^_[A-Za-z0-9._-]+$/;
const PORT = /^(?:\d{1,5}|_[A-Za-z0-9._-]+)$/;

/**
 * The client address for a request from `peer` (undefined: the socket was gone, then 'unknown').
 * `trusted` undefined or empty: always the peer.
 */
export function clientAddress(
  peer: string | undefined,
  headers: ForwardingHeaders,
  trusted: AddressRanges | undefined,
): string {
  const from = peer ?? 'unknown';
  if (trusted === undefined || !trusted.contains(from)) return from;
  const forwarded = headers.forwarded.some((line) => line.trim() !== '');
  const found = forwarded
    ? walk(headers.forwarded, (element) => forwardedHop(element, trusted))
    : walk(headers.xForwardedFor, (element) => nodeHop(element, trusted));
  return found ?? from;
}

/** The client address of an exchange, reading the forwarding headers only when the peer is trusted. */
export function exchangeClient(ex: ServerExchange, trusted: AddressRanges | undefined): string {
  if (trusted === undefined) return ex.remoteAddress ?? 'unknown';
  return clientAddress(ex.remoteAddress, lazyHeaders(ex), trusted);
}

/**
 * Every field line of both headers, read on first use. A proxy may add its own line instead of appending
 * to the client's (HAProxy's `option forwardfor` does), so the first line alone could be the client's
 * forgery.
 */
function lazyHeaders(ex: ServerExchange): ForwardingHeaders {
  let forwarded: string[] | undefined;
  let xForwardedFor: string[] | undefined;
  return {
    get forwarded() {
      forwarded ??= ex.headerLines('forwarded');
      return forwarded;
    },
    get xForwardedFor() {
      xForwardedFor ??= ex.headerLines('x-forwarded-for');
      return xForwardedFor;
    },
  };
}

/**
 * The first untrusted hop from the right over `lines` (the last line's last element first), the
 * leftmost hop when all are trusted, or undefined (fall back to the peer). Looks for commas from the
 * right, so the work is bounded by MAX_HOPS × MAX_ELEMENT_LENGTH however long the lines are.
 */
function walk(lines: readonly string[], read: (element: string) => Hop | undefined): string | undefined {
  let hops = 0;
  let leftmost: string | undefined;
  for (let l = lines.length - 1; l >= 0; l -= 1) {
    const line = lines[l] as string;
    let end = line.length;
    for (;;) {
      hops += 1;
      if (hops > MAX_HOPS) return undefined;
      // The comma before this element, looking back no further than an element may be long.
      const floor = Math.max(-1, end - MAX_ELEMENT_LENGTH - 2);
      let start = end - 1;
      while (start > floor && line.charCodeAt(start) !== COMMA) start -= 1;
      if (start === floor && floor >= 0) return undefined; // longer than MAX_ELEMENT_LENGTH
      const element = line.slice(start + 1, end).trim();
      // Empty list elements are allowed and ignored (RFC 9110 §5.6.1).
      if (element !== '') {
        const hop = read(element);
        if (hop === undefined || 'unknown' in hop) return undefined;
        if (!hop.trusted) return hop.address;
        leftmost = hop.address;
      }
      if (start < 0) break;
      end = start;
    }
  }
  return leftmost;
}

/** One element of `Forwarded`: `pair *( ";" pair )`, of which only `for` counts. */
function forwardedHop(element: string, trusted: AddressRanges): Hop | undefined {
  let node: string | undefined;
  for (const raw of element.split(';')) {
    const pair = raw.trim();
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) return undefined;
    const value = unquote(pair.slice(eq + 1));
    if (value === undefined) return undefined;
    if (pair.slice(0, eq).toLowerCase() !== 'for') continue;
    if (node !== undefined) return undefined; // a parameter occurs at most once per element (RFC 7239 §4)
    node = value;
  }
  // An element that does not say whom it was forwarded for names nobody: like `unknown`.
  if (node === undefined) return { unknown: true };
  return nodeHop(node, trusted);
}

/** A token, or a quoted-string with its backslash escapes undone; undefined when neither. */
function unquote(value: string): string | undefined {
  if (!value.startsWith('"')) return TOKEN_OR_BRACKETS.test(value) ? value : undefined;
  if (value.length < 2 || !value.endsWith('"')) return undefined;
  let out = '';
  for (let i = 1; i < value.length - 1; i += 1) {
    let c = value[i] as string;
    if (c === '"') return undefined;
    if (c === '\\') {
      i += 1;
      if (i >= value.length - 1) return undefined;
      c = value[i] as string;
    }
    out += c;
  }
  return out;
}

/** A node (RFC 7239 §6): address or obfuscated name or `unknown`, with an optional port. */
function nodeHop(node: string, trusted: AddressRanges): Hop | undefined {
  let name = node;
  if (node.startsWith('[')) {
    const close = node.indexOf(']');
    if (close === -1) return undefined;
    const after = node.slice(close + 1);
    if (after !== '' && !(after.startsWith(':') && PORT.test(after.slice(1)))) return undefined;
    name = node.slice(1, close);
    if (!name.includes(':')) return undefined; // brackets hold IPv6 only
  } else if (node.indexOf(':') === node.lastIndexOf(':') && node.includes(':')) {
    // One colon: name:port (a bare IPv6 address has at least two).
    const colon = node.indexOf(':');
    if (!PORT.test(node.slice(colon + 1))) return undefined;
    name = node.slice(0, colon);
  }
  if (name.length === 7 && name.toLowerCase() === 'unknown') return { unknown: true };
  if (name.charCodeAt(0) === UNDERSCORE) return OBFUSCATED.test(name) ? { address: name, trusted: false } : undefined;
  // A dotted quad parseV4 takes is already canonical: no new string.
  const v4 = parseV4(name);
  if (v4 >= 0) return { address: name, trusted: trusted.hasV4(v4) };
  const address = parseIp(name);
  if (address === undefined) return undefined;
  return { address: formatIp(address), trusted: trusted.has(address) };
}
