/**
 * Deprecation notices for legacy per-pool email.
 *
 * Every address found in a non-empty `notification_email` of an account's pools gets a notice explaining
 * the move to account-level notifications and the page-by-page bulk PATCH: the first soon after start
 * (the service runs a pass at start and then every minute), then at most once per
 * `deprecation_notice_interval` (default 24 h) — measured from the last notice queued for that
 * (account, address), which is stored, so restarts do not re-send early. Once no pool of the account
 * lists the address (in particular when every pool's notification_email is empty) no notice is queued,
 * and queued ones not yet sent are cancelled by the sender.
 *
 * Queueing is a durable delivery like any alert: the (account, address) slot and the delivery row are
 * written in one transaction, and the slot is taken by compare-and-set, so several processes queue one.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { parseNotificationEmail } from '../model/pool-schema.js';
import { type LegacyEmailPool, poolsWithLegacyEmail } from '../pools/legacy-email.js';
import type { Store } from '../store/database.js';
import { newDelivery } from './delivery-rows.js';
import { DEPRECATION_ALERT_TYPE, deprecationNoticeEmail } from './messages.js';
import { insertDeliveries, takeDeprecationSlot } from './queries/outbox.js';

export interface DeprecationOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  intervalMs: number;
  apiBase: string;
}

export class DeprecationNotices {
  readonly #o: DeprecationOptions;

  constructor(options: DeprecationOptions) {
    this.#o = options;
  }

  /** Queues every notice that is due now. Returns how many were queued. */
  async pass(): Promise<number> {
    const { store, clock, intervalMs } = this.#o;
    const byAccount = new Map<string, LegacyEmailPool[]>();
    for (const pool of await poolsWithLegacyEmail(store.db)) {
      byAccount.set(pool.account_id, [...(byAccount.get(pool.account_id) ?? []), pool]);
    }
    let queued = 0;
    for (const [accountId, pools] of byAccount) {
      const addresses = new Map<string, { display: string; pools: string[] }>();
      for (const pool of pools) {
        for (const address of parseNotificationEmail(pool.notification_email)) {
          const key = address.toLowerCase();
          const entry = addresses.get(key) ?? { display: address, pools: [] };
          if (!entry.pools.includes(pool.name)) entry.pools.push(pool.name);
          addresses.set(key, entry);
        }
      }
      for (const [key, entry] of addresses) {
        const now = clock.now();
        const nowIso = new Date(now).toISOString();
        const cutoff = new Date(now - intervalMs).toISOString();
        const mail = deprecationNoticeEmail({
          accountId,
          address: entry.display,
          pools: entry.pools,
          legacyPoolCount: pools.length,
          intervalMs,
          apiBase: this.#o.apiBase,
        });
        const took = await store.db.transaction().execute(async (trx) => {
          if (!(await takeDeprecationSlot(trx, accountId, key, nowIso, cutoff))) return false;
          await insertDeliveries(trx, [
            newDelivery({
              account_id: accountId,
              kind: 'deprecation_notice',
              dedupe_key: `deprecation:${accountId}:${key}:${nowIso}`,
              event_id: null,
              policy_id: null,
              mechanism_type: 'email',
              mechanism: entry.display,
              payload: {
                name: 'Deprecation notice: per-pool notification_email',
                description: 'Legacy per-pool notification email is deprecated',
                alert_type: DEPRECATION_ALERT_TYPE,
                subject: mail.subject,
                text: mail.text,
              },
              created_at: nowIso,
            }),
          ]);
          return true;
        });
        if (took) queued++;
      }
    }
    if (queued > 0) this.#o.logger.info('deprecation notices queued', { count: queued });
    return queued;
  }
}
