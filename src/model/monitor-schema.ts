import { z } from 'zod';
import { plainText } from './plain-text.js';
import { headerMap } from './pool-schema.js';

/**
 * Monitor fields and their defaults, shared by the config file (inline `monitor:` of a pool) and the
 * management API. Defaults are Cloudflare's, except `interval`, which Switchyard accepts down to 1 s.
 * `type: "jsonrpc"` is Switchyard's extension: POSTs eth_chainId + eth_blockNumber (+ eth_syncing).
 */
export const MONITOR_DEFAULTS = {
  type: 'http',
  method: 'GET', // jsonrpc monitors always POST
  path: '/',
  header: {},
  port: 0, // 0 = the origin address's own port / scheme default
  timeout: 5, // seconds per probe attempt
  retries: 2, // quick retries inside one check before it counts as failed
  interval: 60, // seconds between checks
  expected_codes: '200',
  expected_body: '',
  follow_redirects: false,
  allow_insecure: false,
  consecutive_up: 0, // 0 counts as 1
  consecutive_down: 0, // 0 counts as 1
  description: '',
  max_block_lag: 8, // jsonrpc only: blocks behind the pool's best origin before failing
} as const;

export const MONITOR_TYPES = ['http', 'https', 'jsonrpc'] as const;

export const monitorFields = {
  type: z.enum(MONITOR_TYPES),
  method: z
    .string()
    .regex(/^[A-Z]+$/, 'an HTTP method in capitals, e.g. GET')
    // CONNECT asks for a tunnel, not a resource: there is no answer to judge.
    .refine((method) => method !== 'CONNECT', 'CONNECT opens a tunnel, not a check: use GET, HEAD or another method'),
  // Written into the request line: no control characters (plain-text.ts).
  path: plainText()
    .startsWith('/', 'must start with "/"')
    // "//host/…" (or "/\\host/…") resolves to another host: the probe must stay on the origin's host.
    .refine((path) => !/^\/[/\\]/.test(path), 'must be a path on the origin, not start with "//"'),
  header: headerMap,
  port: z.number().int().min(0).max(65535),
  timeout: z.number().int().min(1).max(10),
  retries: z.number().int().min(0).max(5),
  interval: z.number().int().min(1).max(3600),
  expected_codes: z.string().regex(/^([1-5][0-9x]{2})(,[1-5][0-9x]{2})*$/i, 'e.g. "200", "2xx" or "200,301"'),
  expected_body: z.string().max(1000),
  follow_redirects: z.boolean(),
  allow_insecure: z.boolean(),
  consecutive_up: z.number().int().min(0).max(100),
  consecutive_down: z.number().int().min(0).max(100),
  description: plainText().max(1000),
  max_block_lag: z.number().int().min(0).max(100_000),
};

/** A monitor as written by a user: every field optional, unknown keys refused. */
export const monitorInput = z.strictObject({
  type: monitorFields.type.optional(),
  method: monitorFields.method.optional(),
  path: monitorFields.path.optional(),
  header: monitorFields.header.optional(),
  port: monitorFields.port.optional(),
  timeout: monitorFields.timeout.optional(),
  retries: monitorFields.retries.optional(),
  interval: monitorFields.interval.optional(),
  expected_codes: monitorFields.expected_codes.optional(),
  expected_body: monitorFields.expected_body.optional(),
  follow_redirects: monitorFields.follow_redirects.optional(),
  allow_insecure: monitorFields.allow_insecure.optional(),
  consecutive_up: monitorFields.consecutive_up.optional(),
  consecutive_down: monitorFields.consecutive_down.optional(),
  description: monitorFields.description.optional(),
  max_block_lag: monitorFields.max_block_lag.optional(),
});
export type MonitorInput = z.infer<typeof monitorInput>;

/** A monitor with every default filled in. */
export type MonitorSettings = {
  -readonly [K in keyof typeof MONITOR_DEFAULTS]: K extends 'header'
    ? Record<string, string[]>
    : K extends 'type'
      ? (typeof MONITOR_TYPES)[number]
      : (typeof MONITOR_DEFAULTS)[K] extends string
        ? string
        : (typeof MONITOR_DEFAULTS)[K] extends number
          ? number
          : boolean;
};

export function withMonitorDefaults(input: MonitorInput): MonitorSettings {
  return { ...MONITOR_DEFAULTS, header: {}, ...input } as MonitorSettings;
}
