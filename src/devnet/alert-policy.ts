/**
 * The devnet's demo alert (SPEC §1: "kill an origin and see failover and an alert"). When the devnet is
 * enabled, `serve` makes sure the routing account (`account_id`) has one account-level
 * `load_balancing_health_alert` policy that emails `devnet.alert_email` (default `operator@localhost`)
 * on every health change of the account's pools — origins and pools, Unhealthy and Healthy. Without
 * `smtp_url` that mail lands as an `.eml` file in `data_dir/outbox/`, so the demo needs no mail server.
 *
 * Create once, never overwrite (like config pools): the policy has a fixed id per account (a name-based
 * UUID), so it is created when that id is absent and left alone otherwise — edits, renames and
 * `enabled: false` made through the API survive restarts. A deleted policy comes back on the next start;
 * `devnet.alert_email: ""` stops seeding it. Several processes starting at once on one PostgreSQL
 * database race safely: the loser's insert hits the primary key and is ignored.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { HEALTH_ALERT_TYPE } from '../notifications/matching.js';
import { getPolicy, insertPolicy } from '../notifications/queries/alert-policies.js';
import type { Store } from '../store/database.js';
import { isUniqueViolation, timestamp } from '../store/ids.js';

export const DEVNET_ALERT_POLICY_NAME = 'devnet health alerts (demo)';

/** A fixed random namespace for name-based (version 5) policy ids. */
const NAMESPACE = Buffer.from('7b3f1c52a9e84d0f9e4a6d2c1f0b8e35', 'hex');

/** The demo policy's id in an account: a UUID like the API's ids, the same on every start. */
export function devnetAlertPolicyId(accountId: string): string {
  const hash = createHash('sha1').update(NAMESPACE).update(`devnet-alert:${accountId}`).digest();
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50; // version 5
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80; // RFC 4122 variant
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export interface DevnetAlertOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  accountId: string;
  /** Where the alerts go; "" seeds nothing. */
  email: string;
  /** Shown in the policy's description. */
  pool: string;
}

/** Creates the demo policy when it does not exist; returns its id (undefined when `email` is ""). */
export async function seedDevnetAlertPolicy(options: DevnetAlertOptions): Promise<string | undefined> {
  const { store, accountId, email } = options;
  if (email === '') return undefined;
  const id = devnetAlertPolicyId(accountId);
  if ((await getPolicy(store.db, accountId, id)) !== undefined) return id;
  try {
    await insertPolicy(
      store.db,
      accountId,
      id,
      {
        name: DEVNET_ALERT_POLICY_NAME,
        description:
          `Created by switchyard serve for the local devnet (pool ${options.pool}): emails every health change ` +
          `of this account's pools to ${email}; without smtp_url the mail is written to data_dir/outbox/. ` +
          'Edit, disable or delete it through the API; serve never overwrites it (devnet.alert_email: "" stops seeding it).',
        enabled: true,
        alert_type: HEALTH_ALERT_TYPE,
        mechanisms: { email: [{ id: email }] },
        filters: {},
        alert_interval: null,
      },
      timestamp(options.clock),
    );
  } catch (err) {
    if (isUniqueViolation(err)) return id; // another process created it first
    throw err;
  }
  options.logger.info('created the devnet alert policy', { policy_id: id, account_id: accountId, email });
  return id;
}
