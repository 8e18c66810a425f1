/**
 * Which webhook targets Switchyard may connect to (server-side request forgery guard).
 *
 * Always refused: link-local addresses (169.254.0.0/16, fe80::/10 — this covers the AWS, GCP, Azure
 * and Oracle metadata service at 169.254.169.254), other cloud metadata endpoints (100.100.100.200,
 * fd00:ec2::254, 192.0.0.192, 168.63.129.16 and the names metadata.google.internal, metadata.goog,
 * instance-data[.ec2.internal]), multicast and broadcast. Private and local ranges (127/8, 10/8,
 * 172.16/12, 192.168/16, 100.64/10, 0/8, 198.18/15, ::1, ::, fc00::/7) are allowed unless
 * `webhooks.deny_private: true`. IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::/96) addresses are
 * judged by the IPv4 address inside them.
 *
 * The check runs on the URL (literal addresses, names) and again on every address a name resolves
 * to, at connect time (`guardedLookup`), so a name that resolves to a refused address — or is rebound
 * to one later — is refused too.
 */
import { type LookupAddress, type LookupAllOptions, type LookupOneOptions, lookup } from 'node:dns';
import { BlockList, isIP } from 'node:net';

export interface TargetPolicy {
  denyPrivate: boolean;
}

/** Thrown (or passed to the connect callback) when a target is refused; `reason` is safe to show. */
export class TargetRefusedError extends Error {
  override readonly name = 'TargetRefusedError';
  readonly code = 'ETARGETREFUSED';
}

function blockList(v4: string[], v6: string[]): BlockList {
  const list = new BlockList();
  for (const cidr of v4) {
    const [net, prefix] = cidr.split('/') as [string, string];
    list.addSubnet(net, Number(prefix), 'ipv4');
  }
  for (const cidr of v6) {
    const [net, prefix] = cidr.split('/') as [string, string];
    list.addSubnet(net, Number(prefix), 'ipv6');
  }
  return list;
}

const LINK_LOCAL = blockList(['169.254.0.0/16'], ['fe80::/10']);
const METADATA = blockList(['100.100.100.200/32', '192.0.0.192/32', '168.63.129.16/32'], ['fd00:ec2::254/128']);
const NOT_UNICAST = blockList(['224.0.0.0/4', '240.0.0.0/4'], ['ff00::/8']);
const PRIVATE = blockList(
  ['127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '0.0.0.0/8', '198.18.0.0/15'],
  ['::1/128', '::/128', 'fc00::/7'],
);
const METADATA_NAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** The IPv4 address embedded in an IPv4-mapped or NAT64 IPv6 address, if any. */
function embeddedV4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const match = /^(?:::ffff:|64:ff9b::)(.+)$/.exec(lower);
  if (match === undefined || match === null) return undefined;
  const tail = match[1] as string;
  if (isIP(tail) === 4) return tail;
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(tail);
  if (hex === null) return undefined;
  const hi = Number.parseInt(hex[1] as string, 16);
  const lo = Number.parseInt(hex[2] as string, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Why an IP address is refused under `policy`, or undefined when it is allowed. */
export function refusalReason(address: string, policy: TargetPolicy): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const v4 = embeddedV4(bare);
  const ip = v4 ?? bare;
  const family = isIP(ip) === 4 ? 'ipv4' : isIP(ip) === 6 ? 'ipv6' : undefined;
  if (family === undefined) return `${address} is not an IP address`;
  if (LINK_LOCAL.check(ip, family)) return `${address} is a link-local address (always refused)`;
  if (METADATA.check(ip, family)) return `${address} is a cloud metadata address (always refused)`;
  if (NOT_UNICAST.check(ip, family) || ip === '255.255.255.255') {
    return `${address} is not a unicast address (always refused)`;
  }
  if (policy.denyPrivate && PRIVATE.check(ip, family)) {
    return `${address} is a private or local address (refused because webhooks.deny_private is true)`;
  }
  return undefined;
}

/**
 * Checks a webhook URL's shape and host. Returns the parsed URL or throws TargetRefusedError with a
 * message that names the problem (never the URL's credentials or query).
 */
export function checkWebhookUrl(raw: string, policy: TargetPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefusedError('url must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TargetRefusedError(`url must use http or https, not ${url.protocol.replace(/:$/, '')}`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === '') throw new TargetRefusedError('url has no host');
  if (isIP(host) !== 0) {
    const reason = refusalReason(host, policy);
    if (reason !== undefined) throw new TargetRefusedError(`url host ${reason}`);
  } else if (METADATA_NAMES.has(host.replace(/\.$/, ''))) {
    throw new TargetRefusedError(`url host ${host} is a cloud metadata service (always refused)`);
  }
  return url;
}

/** Resolves a host name and checks every address it resolves to. */
export async function checkResolvedHost(hostname: string, policy: TargetPolicy): Promise<void> {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return;
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
    lookup(host, { all: true }, (err, found) => (err ? reject(err) : resolve(found))),
  );
  for (const { address } of addresses) {
    const reason = refusalReason(address, policy);
    if (reason !== undefined) throw new TargetRefusedError(`url host ${host} resolves to ${reason}`);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls.connect (undici's `connect` option) that refuses a name when any address it
 * resolves to is refused. Literal IP hosts never reach a lookup; `checkWebhookUrl` covers them.
 */
export function guardedLookup(policy: TargetPolicy) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions | number, callback: LookupCallback): void => {
    const opts = typeof options === 'number' ? { family: options } : options;
    lookup(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      for (const { address } of addresses) {
        const reason = refusalReason(address, policy);
        if (reason !== undefined) return callback(new TargetRefusedError(`${hostname} resolves to ${reason}`), []);
      }
      const first = addresses[0];
      if ('all' in opts && opts.all === true) return callback(null, addresses);
      if (first === undefined) return callback(new TargetRefusedError(`${hostname} resolves to no address`), []);
      return callback(null, first.address, first.family);
    });
  };
}
