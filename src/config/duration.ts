import { z } from 'zod';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration in config: a number of seconds, or a string such as "500ms", "30s", "5m", "24h", "7d".
 * Parsed to milliseconds.
 */
export const durationMs = z.union([z.number().nonnegative(), z.string()]).transform((value, ctx) => {
  if (typeof value === 'number') return Math.round(value * 1000);
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(value.trim());
  if (!match) {
    ctx.addIssue({
      code: 'custom',
      message: `"${value}" is not a duration; write a number of seconds or e.g. "500ms", "30s", "5m", "24h"`,
    });
    return z.NEVER;
  }
  return Math.round(Number(match[1]) * (UNIT_MS[match[2] as string] as number));
});
