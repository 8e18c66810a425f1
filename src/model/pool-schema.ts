import { z } from 'zod';
import { addressProblem, normaliseAddress, WS_SCHEMES } from './origin-address.js';
import { plainText } from './plain-text.js';

/**
 * Pool and origin fields shared by the config file and the management API (Cloudflare shapes).
 * Names: letters, digits, "-" and "_". Weights 0..1 (0 = never chosen). Addresses are a node URL
 * (http(s)://[user:pass@]host[:port][/path][?query]) or a bare host[:port] meaning http://host:port/,
 * parsed and normalised by the origin address model (origin-address.ts); an optional `ws_address`
 * (ws(s)://…, never bare) goes through the same model with the ws schemes.
 */
export const NAME_PATTERN = /^[A-Za-z0-9_-]{1,100}$/;
export const poolName = z.string().regex(NAME_PATTERN, 'letters, digits, "-" and "_" only (1-100 characters)');

/**
 * An email address as mail servers accept it in practice: a dot-atom local part, then `localhost` or a
 * domain of dot-separated labels ending in an alphabetic TLD (`ops@example.com`, `a.b+tag@mail.example.org`;
 * not `a@.b.c`, `a@b`, `a b@c.d`, `"quoted"@c.d`). At most 254 characters (RFC 5321).
 */
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const EMAIL = new RegExp(`^${ATOM}(?:\\.${ATOM})*@(?:localhost|(?:${LABEL}\\.)+[A-Za-z]{2,63})$`);
/** Bounds the legacy field: enough for dozens of addresses, not a place to store a mailing list. */
const MAX_NOTIFICATION_EMAIL = 2048;

/** `""` (none) or comma-separated addresses (spaces around commas allowed), each validated. */
export const notificationEmail = z
  .string()
  .max(MAX_NOTIFICATION_EMAIL)
  .refine((value) => value === '' || value.split(',').every((part) => isEmailAddress(part.trim())), {
    message: 'must be "" (none) or one or more comma-separated email addresses',
  });

export function isEmailAddress(value: string): boolean {
  return value.length <= 254 && EMAIL.test(value);
}

export function parseNotificationEmail(value: string): string[] {
  return value === ''
    ? []
    : value
        .split(',')
        .map((part) => part.trim())
        .filter((part) => part !== '');
}

/** RFC 9110 field names (tokens). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/**
 * Field values: visible characters, spaces and tabs — no CR, LF, NUL or other C0/C1 control character
 * (U+0080–U+009F are refused although HTTP's obs-text would carry them), so nothing can split a request.
 */
const HEADER_VALUE = /^[\t\x20-\x7e\xa0-\xff]{0,4096}$/;
/** Headers that frame the message or the connection: the HTTP client owns them, a user may not set them. */
const RESERVED_HEADERS = new Set([
  'connection',
  'content-length',
  'expect',
  'http2-settings',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Extra request headers of an origin or a monitor, Cloudflare's shape `{"Host": ["rpc.example"]}`:
 * at most 20 names (valid tokens, distinct regardless of case, none of RESERVED_HEADERS), each with
 * 1..10 values free of control characters.
 */
export const headerMap = z
  .record(
    z
      .string()
      .regex(HEADER_NAME, 'header names are HTTP tokens (letters, digits, "-", …; 1-100 characters)')
      .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), {
        message: 'this header is set by the HTTP client and cannot be configured',
      }),
    z
      .array(z.string().regex(HEADER_VALUE, 'header values may not contain control characters (CR, LF, NUL, …)'))
      .min(1, 'give at least one value')
      .max(10),
  )
  .superRefine((headers, ctx) => {
    const names = Object.keys(headers);
    if (names.length > 20) ctx.addIssue({ code: 'custom', message: 'at most 20 headers' });
    const seen = new Set<string>();
    for (const name of names) {
      const lower = name.toLowerCase();
      if (seen.has(lower)) ctx.addIssue({ code: 'custom', path: [name], message: 'the same header is named twice' });
      seen.add(lower);
    }
  });

/** An origin address as written (config or API), checked by the address model; the output is the raw text. */
export const originAddress = z
  .string()
  .min(1)
  .max(2048)
  .superRefine((value, ctx) => {
    const problem = addressProblem(value);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });

/** An origin's `ws_address` as written: ws:// or wss:// only (no bare form), otherwise as `originAddress`. */
export const originWsAddress = z
  .string()
  .min(1)
  .max(2048)
  .superRefine((value, ctx) => {
    const problem = addressProblem(value, WS_SCHEMES);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });

/**
 * Origin names and pool descriptions appear in alert emails, subjects and logs: no control characters
 * (plain-text.ts), so a name cannot forge a line there.
 */
export const originName = plainText().min(1).max(100);
export const poolDescription = plainText().max(1024);

/** An origin as the config file writes it; the address comes out canonical (the API's schema is in api/). */
export const originInput = z.strictObject({
  name: originName,
  address: originAddress.transform((value) => normaliseAddress(value)),
  enabled: z.boolean().optional(),
  weight: z.number().min(0).max(1).optional(),
  header: headerMap.optional(),
  /** An archive node (every block from 0); default false. */
  archive: z.boolean().optional(),
  /** The origin's newHeads push endpoint (ws/wss); absent: its head is polled. */
  ws_address: originWsAddress.transform((value) => normaliseAddress(value, WS_SCHEMES)).optional(),
  /** The most requests per second the gateway sends this origin (SPEC §17); absent: no cap. */
  max_requests_per_second: z.number().positive().max(1_000_000).optional(),
});
export type OriginInput = z.infer<typeof originInput>;

const healthFilter = z.strictObject({ disable: z.boolean().optional(), healthy: z.boolean().nullable().optional() });
export const notificationFilter = z
  .strictObject({ origin: healthFilter.nullable().optional(), pool: healthFilter.nullable().optional() })
  .nullable();
export type NotificationFilter = z.infer<typeof notificationFilter>;

export const STEERING_POLICIES = [
  'random',
  'hash',
  'least_outstanding_requests',
  'least_connections',
  'dynamic_latency',
] as const;
export const originSteering = z.strictObject({ policy: z.enum(STEERING_POLICIES).optional() });
