/**
 * `GET /accounts/:account_id/alerting/v3/available_alerts` (Cloudflare's endpoint; the SDK's
 * `alerting.availableAlerts.list`): the alert types policies accept, as category →
 * `[{type, display_name, description, filter_options}]` — the health alert under "Load Balancing", the
 * chain-incident types (SPEC §14) under "Switchyard". `filter_options` follow Cloudflare's form
 * (`{ComparisonOperator, Key, Optional, AvailableValues}`); `AvailableValues` lists the allowed values
 * where they are a fixed set (for `network`: the configured networks not retired), else null.
 */
import { z } from 'zod';
import { ALERT_TYPES, liveNetworkNames } from '../../notifications/alert-types.js';
import type { ApiDeps } from '../deps.js';
import { defineRoute, type Route } from '../route-table.js';

const filterOption = z.object({
  ComparisonOperator: z.string(),
  Key: z.string(),
  Optional: z.boolean(),
  AvailableValues: z.array(z.object({ ID: z.string(), Name: z.string() })).nullable(),
});
const item = z.object({
  type: z.string(),
  display_name: z.string(),
  description: z.string(),
  filter_options: z.array(filterOption),
});

export function availableAlertRoutes(deps: ApiDeps): Route[] {
  const { config, clock } = deps;
  const networks = () => liveNetworkNames(config.networks, clock.now());
  return [
    defineRoute({
      method: 'GET',
      path: '/accounts/:account_id/alerting/v3/available_alerts',
      auth: 'read',
      summary: 'List the alert types notification policies accept, by category',
      tag: 'notifications',
      result: z.record(z.string(), z.array(item)),
      async handler() {
        const out: Record<string, z.infer<typeof item>[]> = {};
        for (const info of ALERT_TYPES) {
          const values = (key: string) =>
            key === 'network' ? networks() : key === 'pool_id' ? undefined : info.filterValues?.[key];
          const list = out[info.category] ?? [];
          out[info.category] = list;
          list.push({
            type: info.type,
            display_name: info.display_name,
            description: info.description,
            filter_options: info.filters.map((key) => {
              const allowed = values(key);
              return {
                ComparisonOperator: '==',
                Key: key,
                Optional: true,
                AvailableValues: allowed === undefined ? null : allowed.map((value) => ({ ID: value, Name: value })),
              };
            }),
          });
        }
        return { result: out };
      },
    }),
  ];
}
