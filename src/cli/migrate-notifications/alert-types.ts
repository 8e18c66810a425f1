/**
 * The other alert types the API offers (`GET …/alerting/v3/available_alerts`), named after the summary
 * so whoever migrates learns what else account-level policies can carry — on this server the chain
 * incidents (docs/incidents.md), on Cloudflare its own. Read-only and best effort: an API without the
 * endpoint, or a token that may not read it, prints nothing and changes nothing about the run.
 */
import type { V4Client } from './v4-client.js';

const MIGRATED = 'load_balancing_health_alert';

export async function otherAlertTypeLines(client: V4Client, accountId: string): Promise<string[]> {
  let byCategory: Record<string, Array<{ type?: string }>>;
  try {
    byCategory = (
      await client.get<Record<string, Array<{ type?: string }>>>(`/accounts/${accountId}/alerting/v3/available_alerts`)
    ).result;
  } catch {
    return [];
  }
  if (byCategory === null || typeof byCategory !== 'object') return [];
  const lines: string[] = [];
  for (const [category, items] of Object.entries(byCategory)) {
    if (!Array.isArray(items)) continue;
    const types = items
      .map((item) => item.type)
      .filter((type): type is string => typeof type === 'string' && type !== MIGRATED);
    if (types.length > 0) lines.push(`    ${category}: ${types.join(', ')}`);
  }
  if (lines.length === 0) return [];
  return [
    '',
    '  Other alert types this API offers (not part of this migration; create policies for them as needed):',
    ...lines,
  ];
}
