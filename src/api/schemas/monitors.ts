/**
 * Request and response shapes of the monitors API: Cloudflare's fields and defaults (type http, GET /,
 * expected "200", interval 60 s, timeout 5 s, retries 2, …) plus `type: "jsonrpc"` with `max_block_lag`
 * (default 8), Switchyard's extension. The field rules live in `model/monitor-schema.ts`, shared with
 * the config file. Read-only fields (id, created_on, modified_on) are accepted and ignored on input.
 * Values of credential headers (Authorization, X-Api-Key, …) are shown as `***` (model/header-secrets.ts).
 * POST and PUT replace every field (omitted ones take defaults); PATCH changes the named ones.
 */
import { z } from 'zod';
import type { Monitor } from '../../health/monitor-queries.js';
import { maskHeaders, unmaskHeaders } from '../../model/header-secrets.js';
import { MONITOR_TYPES, type MonitorSettings, monitorInput } from '../../model/monitor-schema.js';
import { fieldError } from '../validate.js';

const readOnly = z.unknown().optional().describe('Read-only; ignored on input.');

export const monitorBody = monitorInput.extend({ id: readOnly, created_on: readOnly, modified_on: readOnly });
export type MonitorBody = z.output<typeof monitorBody>;

/**
 * The settings a body describes, on top of `base` (defaults for POST/PUT, the current monitor for PATCH).
 * `current` (PUT/PATCH) resolves masked header values (`***`) back to the stored ones.
 */
export function applyMonitorBody(base: MonitorSettings, body: MonitorBody, current?: MonitorSettings): MonitorSettings {
  const { id: _id, created_on: _c, modified_on: _m, ...input } = body;
  const next = { ...base };
  for (const [key, value] of Object.entries(input)) {
    if (value !== undefined) (next as Record<string, unknown>)[key] = value;
  }
  if (input.header !== undefined) {
    const resolved = unmaskHeaders(input.header, current?.header);
    if ('missing' in resolved) {
      throw fieldError(
        `header.${resolved.missing}`,
        'a masked value (***) stands for a stored value this monitor does not have; send the real value',
      );
    }
    next.header = resolved.headers;
  }
  return next;
}

export function settingsOf(monitor: Monitor): MonitorSettings {
  const { id: _id, account_id: _a, created_on: _c, modified_on: _m, ...settings } = monitor;
  return settings;
}

/** The monitor as the API shows it: credential headers masked; `max_block_lag` only for jsonrpc monitors. */
export function monitorView(monitor: Monitor): Record<string, unknown> {
  const { account_id: _account, max_block_lag, ...rest } = monitor;
  const shown = { ...rest, header: maskHeaders(rest.header) };
  return monitor.type === 'jsonrpc' ? { ...shown, max_block_lag } : shown;
}

export const monitorResult = z.object({
  id: z.string(),
  created_on: z.string(),
  modified_on: z.string(),
  type: z.enum(MONITOR_TYPES),
  description: z.string(),
  method: z.string(),
  path: z.string(),
  header: z.record(z.string(), z.array(z.string())),
  port: z.number().int(),
  timeout: z.number().int(),
  retries: z.number().int(),
  interval: z.number().int(),
  expected_codes: z.string(),
  expected_body: z.string(),
  follow_redirects: z.boolean(),
  allow_insecure: z.boolean(),
  consecutive_up: z.number().int(),
  consecutive_down: z.number().int(),
  max_block_lag: z.number().int().optional().describe('jsonrpc monitors only.'),
});
