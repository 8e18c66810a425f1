/**
 * The rules a pool write obeys beyond its schema: a pool a configured network routes to keeps its name
 * (networks find pools by name) and cannot be deleted (routes/pools.ts), and every origin address must be
 * a target the account's outbound policy allows (outbound/policy.ts).
 */
import type { Config } from '../config/schema.js';
import { SwitchyardError } from '../errors/base.js';
import { originUrl } from '../model/origin-address.js';
import type { Pool } from '../model/pool.js';
import { type OutboundPolicy, type TargetRules, WS_SCHEMES } from '../outbound/policy.js';
import type { PoolFields } from '../pools/pool-queries.js';
import { fieldError } from './validate.js';

/** Names of the configured networks that route to this pool (only pools of the routing account). */
export function networksOf(config: Readonly<Config>, pool: Pick<Pool, 'account_id' | 'name'>): string[] {
  if (pool.account_id !== config.account_id) return [];
  return Object.entries(config.networks)
    .filter(([, network]) => network.pools.includes(pool.name))
    .map(([name]) => name)
    .sort();
}

/** A pool a network routes to keeps its name: the network finds it by name (config `networks.*.pools`). */
export function keepNetworkName(config: Readonly<Config>, current: Pool, next: PoolFields): PoolFields {
  const networks = networksOf(config, current);
  if (next.name !== current.name && networks.length > 0) {
    throw new SwitchyardError(
      'API_IN_USE',
      `name: pool "${current.name}" is used by network ${quoted(networks)}; it cannot be renamed while the config routes to it by name`,
      { details: { pointer: '/name', networks } },
    );
  }
  return next;
}

/**
 * Refuses origins whose address or ws_address the account's outbound policy refuses (the URL: literal IPs
 * and names; resolved addresses are checked at connect time). `ws_address` is checked with the ws schemes.
 * Unparseable addresses are the schema's to refuse.
 */
export function allowedTargets(outbound: OutboundPolicy, accountId: string, fields: PoolFields): PoolFields {
  const rules = outbound.rulesFor(accountId);
  const wsRules = outbound.rulesFor(accountId, { schemes: WS_SCHEMES });
  const refusal = (address: string, targetRules: TargetRules): string | undefined => {
    let url: URL;
    try {
      url = originUrl(address);
    } catch {
      return undefined;
    }
    return outbound.refusal(url, targetRules);
  };
  for (const [i, origin] of fields.origins.entries()) {
    const refused = refusal(origin.address, rules);
    if (refused !== undefined) throw fieldError(`origins.${i}.address`, refused);
    const wsRefused = origin.ws_address === undefined ? undefined : refusal(origin.ws_address, wsRules);
    if (wsRefused !== undefined) throw fieldError(`origins.${i}.ws_address`, wsRefused);
  }
  return fields;
}

export function quoted(names: readonly string[]): string {
  return names.map((name) => `"${name}"`).join(', ');
}
