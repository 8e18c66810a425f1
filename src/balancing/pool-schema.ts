import { z } from 'zod';

/**
 * Pool and origin fields shared by the config file and the management API (Cloudflare shapes).
 * Names: letters, digits, "-" and "_". Weights 0..1 (0 = never chosen). Addresses are a node URL
 * (http(s)://host:port/path) or a bare host[:port] meaning http://host:port/.
 */
export const NAME_PATTERN = /^[A-Za-z0-9_-]{1,100}$/;
export const poolName = z.string().regex(NAME_PATTERN, 'letters, digits, "-" and "_" only (1-100 characters)');

const EMAIL = /^[^\s@,<>()"]+@[^\s@,<>()"]+\.[^\s@,<>()"]+$|^[^\s@,<>()"]+@localhost$/;

/** `""` (none) or comma-separated addresses, each validated. */
export const notificationEmail = z
  .string()
  .refine((value) => value === '' || value.split(',').every((part) => EMAIL.test(part.trim())), {
    message: 'must be "" (none) or one or more comma-separated email addresses',
  });

export function isEmailAddress(value: string): boolean {
  return EMAIL.test(value);
}

export function parseNotificationEmail(value: string): string[] {
  return value === ''
    ? []
    : value
        .split(',')
        .map((part) => part.trim())
        .filter((part) => part !== '');
}

export const originInput = z.strictObject({
  name: z.string().min(1).max(100),
  address: z.string().min(1).max(2048),
  enabled: z.boolean().optional(),
  weight: z.number().min(0).max(1).optional(),
  header: z.record(z.string(), z.array(z.string())).optional(),
});
export type OriginInput = z.infer<typeof originInput>;

const healthFilter = z.strictObject({ disable: z.boolean().optional(), healthy: z.boolean().nullable().optional() });
export const notificationFilter = z
  .strictObject({ origin: healthFilter.nullable().optional(), pool: healthFilter.nullable().optional() })
  .nullable();
export type NotificationFilter = z.infer<typeof notificationFilter>;

export const STEERING_POLICIES = ['random', 'hash', 'least_outstanding_requests', 'least_connections'] as const;
export const originSteering = z.strictObject({ policy: z.enum(STEERING_POLICIES).optional() });
