/**
 * Request and response shapes of gateway keys (`/accounts/{account_id}/gateway/keys`, SPEC §11, our
 * extension: the official SDK has no such resource).
 *
 * Input rules (400 / 1002 naming the field):
 * - `name`: 0..120 characters without control characters (default "").
 * - `enabled`: boolean (default true). A disabled key is refused (401) like an unknown one.
 * - `networks`: null (every network, the default) or 1..100 distinct names of configured networks
 *   (`networks` in the config; checked by the route, which knows them).
 * - `rate_limit`: null (the default: `gateway.rate_limit` applies, in the key's own bucket) or
 *   `{requests_per_second: 0.001–1000000, burst?: integer 1–10^9}` (model/limit-bounds.ts, as in the
 *   config); `burst` defaults to max(1, ceil(requests_per_second)), and the answer shows it filled in.
 * - `daily_quota`: null (the default: none) or an integer 1–10^12 of calls per UTC day.
 * Create is POST with these fields; PATCH changes only the fields it names. Unknown fields are refused.
 * `value` appears only in the create answer (and the roll answer is the new value itself).
 */
import { z } from 'zod';
import { dailyQuota, rateLimitInput } from '../../model/limit-bounds.js';
import { plainText } from '../../model/plain-text.js';

const fields = {
  name: plainText().max(120).describe('Default "".'),
  enabled: z.boolean().describe('Default true; a disabled key is refused with 401.'),
  networks: z
    .array(z.string().min(1))
    .min(1, 'needs at least one network; use null for every network')
    .max(100)
    .nullable()
    .describe('Configured network names the key may call; null (default) = every network.'),
  rate_limit: rateLimitInput
    .nullable()
    .describe("Replaces gateway.rate_limit for the key's calls; null (default) = gateway.rate_limit."),
  daily_quota: dailyQuota.nullable().describe('Calls per UTC day; null (default) = no quota.'),
};

export const keyCreateBody = z.strictObject({
  name: fields.name.optional(),
  enabled: fields.enabled.optional(),
  networks: fields.networks.optional(),
  rate_limit: fields.rate_limit.optional(),
  daily_quota: fields.daily_quota.optional(),
});
export const keyPatchBody = keyCreateBody;
export type KeyBody = z.output<typeof keyCreateBody>;

/** PUT …/value takes no body; an empty object is tolerated. */
export const keyRollBody = z.strictObject({}).optional();

export const keyResult = z.object({
  id: z.string(),
  name: z.string(),
  enabled: z.boolean(),
  networks: z.array(z.string()).nullable(),
  rate_limit: z.object({ requests_per_second: z.number(), burst: z.number() }).nullable(),
  daily_quota: z.number().nullable(),
  created_on: z.string(),
  modified_on: z.string(),
  last_used_on: z.string().nullable(),
});

export const createdKeyResult = keyResult.extend({
  value: z.string().describe('The key (swk_…); shown only here and in the roll answer.'),
});

export const usageQuery = z.object({
  since: z.string().optional().describe('First day, YYYY-MM-DD (UTC); default: 29 days before until.'),
  until: z.string().optional().describe('Last day, YYYY-MM-DD (UTC); default: today.'),
});

export const usageResult = z.array(
  z.object({ date: z.string(), network: z.string(), requests: z.number(), errors: z.number() }),
);
