/**
 * A pool as config declares it (`pools:` in the config file): the pool fields plus an optional monitor.
 * Defaults are applied by pool-defaults.ts; the store-backed API takes its own request schemas.
 */
import { z } from 'zod';
import { monitorInput } from './monitor-schema.js';
import {
  notificationEmail,
  notificationFilter,
  originInput,
  originSteering,
  poolDescription,
  poolName,
} from './pool-schema.js';

export const poolInput = z.strictObject({
  name: poolName,
  description: poolDescription.optional(),
  enabled: z.boolean().optional(),
  origins: z.array(originInput).min(1, 'a pool needs at least one origin'),
  minimum_origins: z.number().int().min(0).optional(),
  notification_email: notificationEmail.optional(),
  notification_filter: notificationFilter.optional(),
  origin_steering: originSteering.optional(),
  monitor: monitorInput.optional(),
});
export type PoolInput = z.infer<typeof poolInput>;
