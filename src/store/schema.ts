import type { CoreTables } from './tables/core.js';
import type { HealthTables } from './tables/health.js';
import type { IncidentTables } from './tables/incidents.js';
import type { KeyTables } from './tables/keys.js';
import type { LedgerTables } from './tables/ledger.js';
import type { NotificationTables } from './tables/notifications.js';
import type { SecretsTables } from './tables/secrets.js';
import type { StatsTables } from './tables/stats.js';

/** The whole database as Kysely sees it: one interface per area, merged. */
export interface Database
  extends CoreTables,
    HealthTables,
    NotificationTables,
    KeyTables,
    StatsTables,
    IncidentTables,
    LedgerTables,
    SecretsTables {}
