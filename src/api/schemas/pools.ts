/**
 * Request and response shapes of the pools API (CLOUDFLARE-API.md), as zod schemas: they validate
 * bodies and generate the OpenAPI document. Defaults are Cloudflare's: enabled true, minimum_origins 1,
 * no monitor, notification_email "", origin_steering random, origin enabled true / weight 1 / header {};
 * Switchyard's origin extensions (SPEC §9): `archive` defaults to false and is on every answer;
 * `ws_address` (the origin's ws(s):// newHeads endpoint) is optional and shown, masked, only when set;
 * `max_requests_per_second` (SPEC §17, the gateway's cap on what it sends the origin) likewise.
 *
 * Read-only fields (id, created_on, modified_on, disabled_at, networks, healthy) are accepted and
 * ignored on input, so a pool fetched with GET can be sent back with PUT; any other unknown field is
 * a 400 naming it. POST and PUT replace the whole pool (omitted optional fields take their defaults);
 * PATCH changes only the fields it names (`origins`, if named, is the complete new list).
 *
 * Origin addresses (`address`, and `ws_address` with the ws schemes) are normalised by the address model
 * (model/origin-address.ts) and shown masked. A `***` sent back — in either address (user, password, a
 * query value, a key-like path segment) or as a secret header value — keeps the stored secret of the
 * origin with the same name only while the destination (scheme, host, port of that address; of `address`
 * for headers) is unchanged; with a new destination the write is 400 "re-enter the secret for the new
 * destination" and nothing is stored.
 */
import { z } from 'zod';
import { unmaskHeaders } from '../../model/header-secrets.js';
import {
  AddressError,
  addressProblem,
  destinationOf,
  isMasked,
  normaliseAddress,
  unmaskAddress,
  WS_SCHEMES,
} from '../../model/origin-address.js';
import type { Origin, Pool, PoolFields } from '../../model/pool.js';
import { originWithDefaults, POOL_DEFAULTS } from '../../model/pool-defaults.js';
import {
  notificationEmail,
  notificationFilter,
  originInput,
  originSteering,
  poolDescription,
  poolName,
  STEERING_POLICIES,
} from '../../model/pool-schema.js';
import { ID_PATTERN } from '../../store/ids.js';
import { fieldError } from '../validate.js';

const readOnly = z.unknown().optional().describe('Read-only; ignored on input.');

export const CHECK_REGIONS = [
  'WNAM',
  'ENAM',
  'WEU',
  'EEU',
  'NSAM',
  'SSAM',
  'OC',
  'ME',
  'NAF',
  'SAF',
  'SAS',
  'SEAS',
  'NEAS',
  'ALL_REGIONS',
] as const;

/** The config's origin rules (pool-schema.ts), plus masked addresses and the read-only fields. */
const originBody = originInput.extend({
  name: originInput.shape.name.describe('Unique within the pool.'),
  address: z
    .string()
    .min(1)
    .max(2048)
    .superRefine((value, ctx) => {
      // A masked address is resolved against the stored one first (toOrigin), then checked the same way.
      const problem = isMasked(value) ? undefined : addressProblem(value);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    })
    .describe(
      'http(s)://[user:pass@]host[:port][/path][?query], or a bare host[:port] meaning http://host:port/. ' +
        'Credentials, query values and key-like path segments are returned as ***; *** sent back keeps the ' +
        'stored secret while scheme, host and port are unchanged.',
    ),
  enabled: originInput.shape.enabled.describe('Default true.'),
  weight: originInput.shape.weight.describe('0..1, default 1; 0 = never chosen.'),
  header: originInput.shape.header.describe(
    'Request headers, e.g. {"Host": ["…"]}. Values of credential headers are returned as ***.',
  ),
  archive: originInput.shape.archive.describe(
    'Switchyard extension. true: an archive node, serving every block from 0; default false (the earliest ' +
      'block is learned from missing-data answers).',
  ),
  ws_address: z
    .string()
    .min(1)
    .max(2048)
    .superRefine((value, ctx) => {
      const problem = isMasked(value) ? undefined : addressProblem(value, WS_SCHEMES);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional()
    .describe(
      'Switchyard extension. ws(s)://[user:pass@]host[:port][/path][?query] of the same node: its head then ' +
        'comes from the newHeads push instead of polling. Omitted: none. Masked and resolved like address.',
    ),
  max_requests_per_second: originInput.shape.max_requests_per_second.describe(
    'Switchyard extension. The most requests per second the gateway sends this origin (a provider plan); at ' +
      'its cap the origin is skipped, not waited on. Omitted: no cap.',
  ),
  disabled_at: readOnly,
  healthy: readOnly,
});

const loadShedding = z.strictObject({
  default_percent: z.number().min(0).max(100).optional().describe('0..100, default 0.'),
  default_policy: z.enum(['random', 'hash']).optional().describe('Default random.'),
  session_percent: z.number().min(0).max(100).optional().describe('0..100, default 0.'),
  session_policy: z.enum(['hash']).optional().describe('Default hash.'),
});
/** Cloudflare's defaults, filled in when a pool is given `load_shedding` (stored; the gateway does not shed). */
const LOAD_SHEDDING_DEFAULTS = {
  default_percent: 0,
  default_policy: 'random',
  session_percent: 0,
  session_policy: 'hash',
};

const fields = {
  name: poolName,
  origins: z.array(originBody).min(1, 'a pool needs at least one origin').max(100),
  description: poolDescription.optional(),
  enabled: z.boolean().optional(),
  minimum_origins: z.number().int().min(0).max(100).optional(),
  monitor: z
    .union([z.literal(''), z.string().regex(ID_PATTERN, 'must be a monitor id (32 lowercase hex) or "" for none')])
    .nullable()
    .optional()
    .describe('Monitor id; null or "" for none.'),
  notification_email: notificationEmail.optional().describe('Deprecated. "" or comma-separated addresses.'),
  notification_filter: notificationFilter.optional(),
  origin_steering: originSteering.nullable().optional(),
  check_regions: z.array(z.enum(CHECK_REGIONS)).nullable().optional(),
  latitude: z.number().min(-90).max(90).nullable().optional().describe('With longitude; null removes both.'),
  longitude: z.number().min(-180).max(180).nullable().optional().describe('With latitude; null removes both.'),
  load_shedding: loadShedding.nullable().optional(),
  id: readOnly,
  created_on: readOnly,
  modified_on: readOnly,
  disabled_at: readOnly,
  networks: readOnly,
  healthy: readOnly,
};

type Checked = { origins?: { name: string }[] | undefined };

function crossFieldChecks(value: Checked, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  for (const [i, origin] of (value.origins ?? []).entries()) {
    if (seen.has(origin.name)) {
      ctx.addIssue({
        code: 'custom',
        path: ['origins', i, 'name'],
        message: `origin name "${origin.name}" is used twice`,
      });
    }
    seen.add(origin.name);
  }
}

/** POST and PUT: `name` and `origins` required. */
export const poolBody = z.strictObject(fields).superRefine(crossFieldChecks);
/** PATCH of one pool: any subset. */
export const poolPatchBody = z
  .strictObject({ ...fields, name: fields.name.optional(), origins: fields.origins.optional() })
  .superRefine(crossFieldChecks);
/** Bulk PATCH: exactly `{"notification_email": ""}`. */
export const bulkPatchBody = z.strictObject({
  notification_email: z.literal('', {
    error: 'the bulk update only accepts "" (clear the legacy address); set addresses on a single pool instead',
  }),
});

export type PoolBody = z.output<typeof poolBody>;
export type PoolPatchBody = z.output<typeof poolPatchBody>;

/**
 * The pool's new fields: `base` (defaults for POST/PUT, the current pool for PATCH) with the body's
 * fields applied. `current` resolves masked addresses and header values back to the stored ones.
 */
export function applyPoolBody(base: PoolFields, body: PoolPatchBody, current: Pool | undefined): PoolFields {
  const next: PoolFields = { ...base };
  if (body.name !== undefined) next.name = body.name;
  if (body.origins !== undefined) next.origins = body.origins.map((origin, i) => toOrigin(origin, i, current));
  if (body.description !== undefined) next.description = body.description;
  if (body.enabled !== undefined) next.enabled = body.enabled;
  if (body.minimum_origins !== undefined) next.minimum_origins = body.minimum_origins;
  if (body.monitor !== undefined) next.monitor = body.monitor === '' ? null : body.monitor;
  if (body.notification_email !== undefined) next.notification_email = body.notification_email;
  if (body.notification_filter !== undefined) next.notification_filter = body.notification_filter;
  if (body.origin_steering !== undefined) {
    next.origin_steering = { policy: body.origin_steering?.policy ?? 'random' };
  }
  if (body.check_regions !== undefined) next.check_regions = body.check_regions;
  if (body.latitude === null) delete next.latitude;
  else if (body.latitude !== undefined) next.latitude = body.latitude;
  if (body.longitude === null) delete next.longitude;
  else if (body.longitude !== undefined) next.longitude = body.longitude;
  if (body.load_shedding === null) delete next.load_shedding;
  else if (body.load_shedding !== undefined) next.load_shedding = { ...LOAD_SHEDDING_DEFAULTS, ...body.load_shedding };
  if ((next.latitude === undefined) !== (next.longitude === undefined)) {
    throw fieldError(next.latitude === undefined ? 'latitude' : 'longitude', 'give latitude and longitude together');
  }
  return next;
}

/** Fields for POST/PUT: defaults, then the body. */
export function poolFieldsFromBody(body: PoolBody, current: Pool | undefined): PoolFields {
  return applyPoolBody({ ...POOL_DEFAULTS, name: body.name, origins: [] }, body, current);
}

const RE_ENTER = 're-enter the secret for the new destination';

/** The schemes of each address field of an origin (undefined: the model's default, http and https). */
const ADDRESS_SCHEMES = { address: undefined, ws_address: WS_SCHEMES } as const;

/**
 * A sent address of origin `index` (its `address` or `ws_address`) in canonical form: a `***` in it takes
 * the secret of `stored` (the same origin's stored value of that field) while the destination is unchanged.
 */
function resolveAddress(
  sent: string,
  stored: string | undefined,
  index: number,
  name: keyof typeof ADDRESS_SCHEMES,
): string {
  const field = `origins.${index}.${name}`;
  let address = sent;
  if (isMasked(address)) {
    const resolved = unmaskAddress(address, stored);
    if ('refused' in resolved) {
      throw fieldError(
        field,
        resolved.refused === 'destination'
          ? `the scheme, host or port differs from the stored ${name} of this origin: ${RE_ENTER}`
          : `contains a masked secret (***) that stands for nothing stored at that place of this origin's ${name}; send the full address`,
      );
    }
    address = resolved.address;
  }
  try {
    return normaliseAddress(address, ADDRESS_SCHEMES[name]);
  } catch (err) {
    if (err instanceof AddressError) throw fieldError(field, err.message);
    throw err;
  }
}

function toOrigin(input: z.output<typeof originBody>, index: number, current: Pool | undefined): Origin {
  const stored = current?.origins.find((origin) => origin.name === input.name);
  const address = resolveAddress(input.address, stored?.address, index, 'address');
  const ws_address =
    input.ws_address === undefined
      ? undefined
      : resolveAddress(input.ws_address, stored?.ws_address, index, 'ws_address');
  let header = input.header;
  if (header !== undefined) {
    const resolved = unmaskHeaders(header, stored?.header);
    if ('missing' in resolved) {
      throw fieldError(
        `origins.${index}.header.${resolved.missing}`,
        'a masked value (***) stands for a stored value this origin does not have; send the real value',
      );
    }
    const moved = stored !== undefined && destinationOf(address) !== destinationOf(stored.address);
    const first = resolved.kept[0];
    if (moved && first !== undefined) {
      throw fieldError(
        `origins.${index}.header.${first}`,
        `the origin's address now has another scheme, host or port: ${RE_ENTER}`,
      );
    }
    header = resolved.headers;
  }
  return originWithDefaults({ ...input, address, header, ws_address });
}

/** The response schema (OpenAPI only). */
export const poolResult = z.object({
  id: z.string(),
  created_on: z.string(),
  modified_on: z.string(),
  name: z.string(),
  description: z.string(),
  enabled: z.boolean(),
  disabled_at: z.string().optional(),
  minimum_origins: z.number().int(),
  monitor: z.string().optional(),
  notification_email: z.string(),
  notification_filter: notificationFilter,
  origins: z.array(
    z.object({
      name: z.string(),
      address: z.string(),
      enabled: z.boolean(),
      weight: z.number(),
      header: z.record(z.string(), z.array(z.string())),
      archive: z.boolean().describe('Archive node (Switchyard extension).'),
      ws_address: z.string().optional().describe('newHeads push endpoint, masked (Switchyard extension).'),
      max_requests_per_second: z.number().optional().describe('Request cap per second (Switchyard extension).'),
      disabled_at: z.string().optional(),
      healthy: z.boolean(),
    }),
  ),
  origin_steering: z.object({ policy: z.enum(STEERING_POLICIES) }),
  check_regions: z.array(z.string()).nullable(),
  latitude: z.number().optional(),
  longitude: z.number().optional(),
  load_shedding: z
    .object({
      default_percent: z.number(),
      default_policy: z.enum(['random', 'hash']),
      session_percent: z.number(),
      session_policy: z.enum(['hash']),
    })
    .optional(),
  networks: z.array(z.string()).describe('Configured networks that route to this pool (read-only).'),
  healthy: z.boolean().describe('Live health (read-only).'),
});
