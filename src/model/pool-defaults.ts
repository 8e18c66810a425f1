/**
 * Cloudflare's defaults for a pool and its origins, in one place for every writer of pools: the config
 * seeding (pools/seed.ts), the static directory (static-directory.ts) and the management API
 * (api/schemas/pools.ts). Pool: enabled, minimum_origins 1, no monitor, notification_email "", no
 * notification_filter, origin_steering random, no check_regions. Origin: enabled, weight 1, header {},
 * archive false, no ws_address, no max_requests_per_second.
 */

import type { Origin, PoolFields } from './pool.js';
import type { PoolInput } from './pool-input.js';
import type { OriginInput } from './pool-schema.js';

export const POOL_DEFAULTS: Omit<PoolFields, 'name' | 'origins'> = {
  description: '',
  enabled: true,
  minimum_origins: 1,
  monitor: null,
  notification_email: '',
  notification_filter: null,
  origin_steering: { policy: 'random' },
  check_regions: null,
};

/** An origin as written by a user (config or API), with the defaults filled in. */
export function originWithDefaults(
  input: Pick<
    OriginInput,
    'name' | 'address' | 'enabled' | 'weight' | 'header' | 'archive' | 'ws_address' | 'max_requests_per_second'
  >,
): Origin {
  return {
    name: input.name,
    address: input.address,
    enabled: input.enabled ?? true,
    weight: input.weight ?? 1,
    header: input.header ?? {},
    archive: input.archive ?? false,
    ...(input.ws_address === undefined ? {} : { ws_address: input.ws_address }),
    ...(input.max_requests_per_second === undefined ? {} : { max_requests_per_second: input.max_requests_per_second }),
  };
}

/** A pool of the config file with the defaults filled in; `monitorId` is its inline monitor's object, if any. */
export function poolFieldsFromConfig(input: PoolInput, monitorId: string | null): PoolFields {
  return {
    ...POOL_DEFAULTS,
    name: input.name,
    description: input.description ?? POOL_DEFAULTS.description,
    enabled: input.enabled ?? POOL_DEFAULTS.enabled,
    minimum_origins: input.minimum_origins ?? POOL_DEFAULTS.minimum_origins,
    monitor: monitorId,
    notification_email: input.notification_email ?? POOL_DEFAULTS.notification_email,
    notification_filter: input.notification_filter ?? POOL_DEFAULTS.notification_filter,
    origins: input.origins.map(originWithDefaults),
    origin_steering: { policy: input.origin_steering?.policy ?? 'random' },
  };
}
