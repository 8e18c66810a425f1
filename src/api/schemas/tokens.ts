/**
 * Request and response shapes of the account tokens API, as the official SDK sends and reads them
 * (`client.accounts.tokens.*`, types in `cloudflare/resources/accounts/tokens` and `Shared.Token`).
 *
 * Input rules (400 / 1002 naming the field):
 * - `name` 1..120 characters without control characters; `policies` 1..10, each `effect: "allow"`
 *   (no deny policies), 1..10 `permission_groups` whose `id` is one of the two fixed groups
 *   (accounts/token-permissions.ts; a `name`, if sent, must be that group's), and `resources` exactly
 *   `{"com.cloudflare.api.account.<this account>": "*"}` (checked by `checkPolicies`, which knows the
 *   account). A policy `id` (32 hex) is kept; without one a new id is given. `meta` is accepted and not kept.
 * - `expires_on` / `not_before`: RFC 3339 date-times (stored in UTC), or null to remove; `not_before`
 *   must be before `expires_on`. A past `expires_on` is allowed: the token is then expired at once.
 * - `status`: `active` or `disabled`; `expired` only when `expires_on` is in the past (it follows from
 *   the date, it cannot be set on its own).
 * - `condition` (client IP restrictions) is not supported: an empty `condition` is accepted, any
 *   `request_ip` list with entries is refused rather than stored and silently not enforced.
 * Read-only fields (id, issued_on, modified_on, last_used_on) are accepted and ignored, so a token read
 * with GET can be sent back with PUT. On PUT, omitted fields keep their value (name and policies too).
 * `value` (the secret) appears only in the create and roll answers.
 */
import { z } from 'zod';
import {
  accountResource,
  PERMISSION_GROUPS,
  permissionGroup,
  type TokenPolicy,
} from '../../accounts/token-permissions.js';
import { type TokenInfo, type TokenStatus, tokenStatus } from '../../accounts/tokens.js';
import { plainText } from '../../model/plain-text.js';
import { ID_PATTERN, newId } from '../../store/ids.js';
import { fieldError } from '../validate.js';

const readOnly = z.unknown().optional().describe('Read-only; ignored on input.');
const GROUP_LIST = PERMISSION_GROUPS.map((group) => `${group.id} (${group.name})`).join(' or ');

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** The UTC ISO form of an RFC 3339 date-time, or undefined when it is not one (or names no real day). */
export function normaliseDateTime(value: string): string | undefined {
  const m = RFC3339.exec(value);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  const utc = new Date(Date.UTC(y as number, (mo as number) - 1, d, h, mi, s));
  const real =
    utc.getUTCFullYear() === y &&
    utc.getUTCMonth() === (mo as number) - 1 &&
    utc.getUTCDate() === d &&
    utc.getUTCHours() === h &&
    utc.getUTCMinutes() === mi;
  const ms = Date.parse(value);
  if (!real || !Number.isFinite(ms)) return undefined;
  return new Date(ms).toISOString();
}

const dateTime = z
  .string()
  .refine((value) => normaliseDateTime(value) !== undefined, {
    message: 'must be an RFC 3339 date-time such as 2030-01-01T00:00:00Z',
  })
  .nullable()
  .optional();

const groupInput = z
  .strictObject({
    id: z.string().refine((id) => permissionGroup(id) !== undefined, {
      message: `unknown permission group; use ${GROUP_LIST}`,
    }),
    name: z.string().optional().describe('Read-only; if sent, must be the name of the group with this id.'),
    meta: z.record(z.string(), z.unknown()).optional().describe('Accepted and not kept.'),
  })
  .superRefine((group, ctx) => {
    const known = permissionGroup(group.id);
    if (known !== undefined && group.name !== undefined && group.name !== known.name) {
      ctx.addIssue({
        code: 'custom',
        path: ['name'],
        message: `must be "${known.name}" for permission group ${known.id}`,
      });
    }
  });

const policyInput = z.strictObject({
  id: z.string().regex(ID_PATTERN, 'must be 32 lowercase hex characters').optional(),
  effect: z.literal('allow', { error: 'must be "allow"; Switchyard has no deny policies' }),
  permission_groups: z.array(groupInput).min(1, 'needs at least one permission group').max(10),
  resources: z
    .record(z.string(), z.unknown())
    .describe('Exactly {"com.cloudflare.api.account.<account_id>": "*"}: the account of the path.'),
});

const noIpList = z
  .array(z.string())
  .max(0, 'client IP conditions are not supported by Switchyard; remove condition')
  .optional();

const fields = {
  name: plainText().min(1).max(120),
  policies: z.array(policyInput).min(1, 'needs at least one policy').max(10),
  condition: z
    .strictObject({ request_ip: z.strictObject({ in: noIpList, not_in: noIpList }).optional() })
    .optional()
    .describe('Not supported: only an empty condition is accepted.'),
  expires_on: dateTime.describe('RFC 3339; the token is refused from this instant on. null removes it.'),
  not_before: dateTime.describe('RFC 3339; the token is refused before this instant. null removes it.'),
  status: z
    .enum(['active', 'disabled', 'expired'])
    .optional()
    .describe('active or disabled; "expired" only together with a past expires_on.'),
  id: readOnly,
  issued_on: readOnly,
  modified_on: readOnly,
  last_used_on: readOnly,
};

export const tokenCreateBody = z.strictObject(fields);
export const tokenUpdateBody = z.strictObject({
  ...fields,
  name: fields.name.optional(),
  policies: fields.policies.optional(),
});
export type TokenBody = z.output<typeof tokenUpdateBody>;

/** PUT …/value takes no body (the SDK sends none); an empty object is tolerated. */
export const tokenRollBody = z.strictObject({}).optional();

const policyResult = z.object({
  id: z.string(),
  effect: z.literal('allow'),
  permission_groups: z.array(z.object({ id: z.string(), name: z.string() })),
  resources: z.record(z.string(), z.literal('*')),
});

export const tokenResult = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(['active', 'disabled', 'expired']),
  policies: z.array(policyResult),
  issued_on: z.string(),
  modified_on: z.string(),
  last_used_on: z.string().optional(),
  expires_on: z.string().optional(),
  not_before: z.string().optional(),
});
export type TokenResult = z.infer<typeof tokenResult>;

export const createdTokenResult = tokenResult.extend({
  value: z.string().describe('The secret: shown here and in the roll answer only, never again.'),
});

export const verifyResult = z.object({
  id: z.string(),
  status: z.enum(['active', 'disabled', 'expired']),
  expires_on: z.string().optional(),
  not_before: z.string().optional(),
});

export const permissionGroupResult = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(z.string()),
  is_selectable: z.boolean(),
});

export function tokenView(token: TokenInfo, nowMs: number): TokenResult {
  return {
    id: token.id,
    name: token.name,
    status: tokenStatus(token, nowMs),
    policies: token.policies,
    issued_on: token.created_on,
    modified_on: token.modified_on,
    ...(token.last_used_on === null ? {} : { last_used_on: token.last_used_on }),
    ...(token.expires_on === null ? {} : { expires_on: token.expires_on }),
    ...(token.not_before === null ? {} : { not_before: token.not_before }),
  };
}

export function verifyView(token: TokenInfo, nowMs: number): z.infer<typeof verifyResult> {
  return {
    id: token.id,
    status: tokenStatus(token, nowMs),
    ...(token.expires_on === null ? {} : { expires_on: token.expires_on }),
    ...(token.not_before === null ? {} : { not_before: token.not_before }),
  };
}

/** The policies as stored: resources checked against the path's account, group names filled in. */
export function checkPolicies(policies: NonNullable<TokenBody['policies']>, accountId: string): TokenPolicy[] {
  const resource = accountResource(accountId);
  return policies.map((policy, i) => {
    const field = `policies.${i}.resources`;
    const entries = Object.entries(policy.resources);
    if (entries.length !== 1) {
      throw fieldError(field, `must name exactly one resource, {"${resource}": "*"} (this account)`);
    }
    const [key, value] = entries[0] as [string, unknown];
    if (key !== resource) {
      throw fieldError(field, `a token may only grant access to its own account; use {"${resource}": "*"}`);
    }
    if (value !== '*') throw fieldError(`${field}.${key}`, 'must be "*"');
    return {
      id: policy.id ?? newId(),
      effect: 'allow',
      permission_groups: policy.permission_groups.map((group) => {
        const known = permissionGroup(group.id) as { id: string; name: string };
        return { id: known.id, name: known.name };
      }),
      resources: { [resource]: '*' },
    };
  });
}

export interface TokenLifecycleInput {
  status: 'active' | 'disabled';
  expires_on: string | null;
  not_before: string | null;
}

/**
 * Status and validity window after applying `body` on top of `current` (omitted fields keep their
 * value); throws 400 for a window that closes before it opens or a status that contradicts the dates.
 */
export function applyLifecycle(body: TokenBody, current: TokenLifecycleInput, nowMs: number): TokenLifecycleInput {
  const date = (value: string | null | undefined, kept: string | null) =>
    value === undefined ? kept : value === null ? null : (normaliseDateTime(value) as string);
  const expires_on = date(body.expires_on, current.expires_on);
  const not_before = date(body.not_before, current.not_before);
  if (expires_on !== null && not_before !== null && Date.parse(not_before) >= Date.parse(expires_on)) {
    throw fieldError('not_before', `must be before expires_on (${expires_on})`);
  }
  let status: 'active' | 'disabled' = current.status;
  const wanted: TokenStatus | undefined = body.status;
  if (wanted === 'expired') {
    if (expires_on === null || Date.parse(expires_on) > nowMs) {
      throw fieldError('status', '"expired" follows from a past expires_on; set expires_on, or use "disabled"');
    }
    // The stored status stays as it is: "expired" is what a past expires_on shows on its own.
  } else if (wanted !== undefined) {
    status = wanted;
  }
  return { status, expires_on, not_before };
}
