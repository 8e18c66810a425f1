/**
 * The backends a control process answers its workers' leases and reserves from when there is a Redis
 * (SPEC §11 "fail open"): Redis's while it answers, this instance's own (local-backend.ts) while it does
 * not — so during an outage the workers of one instance still share one bucket and one count per key
 * (seeded from the store), instead of each worker limiting alone. Every Redis call goes through the
 * shared status (gateway/rpc/shared-status.ts): the first failure logs the warning once and sets
 * `switchyard_limits_backend_up{backend="redis"}` to 0; while down, each decision made locally counts
 * in the fallback metric and at most one ask per second tries Redis again (its success ends the outage).
 */
import type { LeaseAsk, LeaseBackend } from '../gateway/rpc/lease-backend.js';
import type { LocalQuotaCounter } from '../gateway/rpc/quota.js';
import type { QuotaAsk, QuotaBackend, QuotaGrant } from '../gateway/rpc/quota-backend.js';
import type { SharedLimitsStatus } from '../gateway/rpc/shared-status.js';

/** Asks `shared` unless it is down (then, or when it fails, `local`), noting each outcome in `status`. */
async function failingOver<T>(
  status: SharedLimitsStatus,
  shared: () => Promise<T>,
  local: () => Promise<T>,
  decisions: number,
): Promise<T> {
  if (!status.down || status.probeDue()) {
    const answer = await status.settle(shared());
    if (answer !== undefined) return answer;
  }
  for (let i = 0; i < decisions; i += 1) status.fellBack();
  return local();
}

/** Workers' leases: Redis's buckets, this instance's (`local`) while Redis does not answer. */
export function failoverLeases(shared: LeaseBackend, local: LeaseBackend, status: SharedLimitsStatus): LeaseBackend {
  return {
    lease: (asks: readonly LeaseAsk[]) =>
      failingOver(
        status,
        () => shared.lease(asks),
        () => local.lease(asks),
        asks.length,
      ),
  };
}

/**
 * Workers' quota reserves: Redis's counts, this instance's (`local`, seeded from the store) while Redis
 * does not answer. Each count Redis answers is what every process has reserved: `known` (the instance's
 * seeds) is raised to it, so a Redis that lost its counts starts again from at least that, even before
 * the store's usage caught up.
 */
export function failoverQuotas(
  shared: QuotaBackend,
  local: QuotaBackend,
  status: SharedLimitsStatus,
  known: Pick<LocalQuotaCounter, 'raise'>,
): QuotaBackend {
  const reserve = async (asks: readonly QuotaAsk[]): Promise<QuotaGrant[]> => {
    const grants = await shared.reserve(asks);
    for (const [i, ask] of asks.entries()) {
      const grant = grants[i];
      if (grant !== undefined) known.raise(ask.date, ask.key, ask.quota - grant.left);
    }
    return grants;
  };
  return {
    reserve: (asks: readonly QuotaAsk[]): Promise<QuotaGrant[]> =>
      failingOver(
        status,
        () => reserve(asks),
        () => local.reserve(asks),
        asks.length,
      ),
  };
}
