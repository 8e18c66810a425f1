/**
 * What one account may see of a chain incident (SPEC §14): an incident concerns every account with a pool
 * of the network (its scope), and each account sees only its own part — `pool_ids` are its own pools of
 * the network, and a divergence names only the origins of its own pools (no tenant learns another's
 * origins or pools). The alerts (notifications/incident-dispatch.ts) and the incidents list of the API
 * show the same view. Pure.
 */
import type { IncidentData, IncidentScope, ScopeEntry } from './types.js';

/** One account's entries of an incident's scope, and its pools among them (sorted, once each). */
export interface AccountShare {
  readonly entries: readonly ScopeEntry[];
  readonly poolIds: readonly string[];
}

export function accountShare(scope: IncidentScope, accountId: string): AccountShare {
  const entries = scope.filter((entry) => entry.account_id === accountId);
  return { entries, poolIds: [...new Set(entries.map((entry) => entry.pool_id))].sort() };
}

/** The incident's data as the account of `share` sees it: its pools, and only its own origins. */
export function dataForAccount(data: IncidentData, share: AccountShare): IncidentData {
  const out: IncidentData = { ...data, pool_ids: [...share.poolIds] };
  if (data.hashes !== undefined) {
    const own = new Set(share.entries.flatMap((entry) => (entry.origin === undefined ? [] : [entry.origin])));
    out.hashes = Object.fromEntries(Object.entries(data.hashes).filter(([origin]) => own.has(origin)));
    out.origins = (data.origins ?? []).filter((origin) => own.has(origin));
  }
  return out;
}
