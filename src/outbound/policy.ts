/**
 * The one outbound target policy (SPEC §8): every address Switchyard contacts on an account's behalf —
 * origins (gateway traffic and monitor probes, every redirect hop) and webhooks — goes through it.
 *
 * - `rulesFor(account)`: local targets (loopback, private, CGNAT) are allowed only for accounts in
 *   `outbound.trusted_accounts` (default: the routing account `account_id`); `denyPrivate` (webhooks.
 *   deny_private) refuses them even then. The always-refused set and the name rules are in rules.ts.
 * - Checked twice: on the URL when it is created or changed (`checkUrl`, literal IPs and names), and at
 *   connect time on EVERY address a name resolves to (`lookup` for net/tls connect and undici's
 *   `connect.lookup`; `checkResolved` when a caller resolves first). One refused address refuses the
 *   name, so a name rebound between the check and the connect (DNS rebinding) is refused too. Sockets
 *   to a literal IP never call `lookup`, so connectors check those with `connectGuard().refusal(host)`.
 * - The resolver is a dependency (default: the system's `dns.lookup`, all addresses) so tests can model
 *   DNS answers that change between the check and the connect.
 * - Trust follows a config reload (SPEC §15): `retrust` replaces the trusted accounts, and the rules
 *   `rulesFor` gave out read them at each check, so every connect guard built from them (the gateway's
 *   origin clients, the chain tracker) follows from its next connect on. Connections already open stay
 *   until they close.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import {
  addressRefusal,
  checkHost,
  checkUrl,
  DENY_PRIVATE,
  HTTP_SCHEMES,
  hostRefusal,
  NOT_TRUSTED,
  type Scheme,
  TargetRefusedError,
  type TargetRules,
} from './rules.js';

export { HTTP_SCHEMES, type Scheme, TargetRefusedError, type TargetRules, WS_SCHEMES } from './rules.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to; rejects with the resolver's error (ENOTFOUND, …). */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true }, (err, addresses: LookupAddress[]) => {
      if (err) reject(err);
      else resolve(addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 })));
    });
  });

export interface OutboundPolicyOptions {
  /** `outbound.trusted_accounts`: accounts that may reach loopback, private and CGNAT targets. */
  trustedAccounts: readonly string[];
  resolve?: Resolver;
}

export interface RulesOptions {
  /** `webhooks.deny_private`: refuse local targets even for a trusted account. */
  denyPrivate?: boolean;
  /** The schemes allowed; default http and https (WS_SCHEMES for an origin's `ws_address`). */
  schemes?: readonly Scheme[];
}

/** What a connector needs: a `lookup` for names, and the check for literal IPs (which skip lookup). */
export interface ConnectGuard {
  readonly lookup: LookupFunction;
  /** The refusal for a literal IP host, or undefined (names: undefined, `lookup` checks them). */
  refusal(host: string): TargetRefusedError | undefined;
}

export class OutboundPolicy {
  #trusted: ReadonlySet<string>;
  readonly #resolve: Resolver;

  constructor(options: OutboundPolicyOptions) {
    this.#trusted = new Set(options.trustedAccounts);
    this.#resolve = options.resolve ?? systemResolver;
  }

  isTrusted(accountId: string): boolean {
    return this.#trusted.has(accountId);
  }

  /** A reloaded `outbound.trusted_accounts`: every rule handed out follows from its next check on. */
  retrust(trustedAccounts: readonly string[]): void {
    this.#trusted = new Set(trustedAccounts);
  }

  /** The account's rules; they read the trusted accounts at each check (see `retrust`). */
  rulesFor(accountId: string, options: RulesOptions = {}): TargetRules {
    const deny = options.denyPrivate === true;
    const trusted = (): boolean => this.#trusted.has(accountId);
    return {
      get allowLocal() {
        return trusted() && !deny;
      },
      get localRefusal() {
        return trusted() ? DENY_PRIVATE : NOT_TRUSTED;
      },
      schemes: options.schemes ?? HTTP_SCHEMES,
    };
  }

  /** The URL check (scheme, literal IP, name): returns the parsed URL or throws TargetRefusedError. */
  checkUrl(target: string | URL, rules: TargetRules): URL {
    return checkUrl(target, rules);
  }

  /** The same check as `checkUrl`, answered as the refusal's message, or undefined when allowed. */
  refusal(target: string | URL, rules: TargetRules): string | undefined {
    try {
      checkUrl(target, rules);
      return undefined;
    } catch (err) {
      if (err instanceof TargetRefusedError) return err.message;
      throw err;
    }
  }

  /**
   * Resolves `hostname` and checks every address (a literal IP is checked as is). Throws
   * TargetRefusedError, or the resolver's own error when the name does not resolve.
   */
  async checkResolved(hostname: string, rules: TargetRules): Promise<readonly ResolvedAddress[]> {
    const host = hostname.replace(/^\[(.*)\]$/, '$1');
    const family = isIP(host);
    if (family !== 0) {
      checkHost(host, rules);
      return [{ address: host, family: family === 6 ? 6 : 4 }];
    }
    checkHost(host, rules);
    const addresses = await this.#resolve(host);
    if (addresses.length === 0) throw new TargetRefusedError(`${host} resolves to no address`);
    for (const { address } of addresses) {
      const why = addressRefusal(address, rules);
      if (why !== undefined) throw new TargetRefusedError(`${host} resolves to ${address}, ${why}`);
    }
    return addresses;
  }

  /**
   * A `lookup` for net.connect / tls.connect / undici's `connect` that passes a name's addresses on
   * only when none of them is refused (the error is a TargetRefusedError, code ETARGETREFUSED).
   */
  lookup(rules: TargetRules): LookupFunction {
    return (hostname, options, callback) => {
      this.checkResolved(hostname, rules).then(
        (resolved) => {
          const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
          const usable = wanted === 0 ? resolved : resolved.filter((entry) => entry.family === wanted);
          const first = usable[0];
          if (options.all === true) {
            callback(
              null,
              usable.map(({ address, family }) => ({ address, family })),
            );
          } else if (first === undefined) {
            const err: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${wanted} address`);
            err.code = 'ENOTFOUND';
            callback(err, '', 0);
          } else {
            callback(null, first.address, first.family);
          }
        },
        (err: NodeJS.ErrnoException) => (options.all === true ? callback(err, []) : callback(err, '', 0)),
      );
    };
  }

  connectGuard(rules: TargetRules): ConnectGuard {
    return {
      lookup: this.lookup(rules),
      refusal(host) {
        if (isIP(host) === 0) return undefined;
        const why = hostRefusal(host, rules);
        return why === undefined ? undefined : new TargetRefusedError(why);
      },
    };
  }
}
