/**
 * The management API's routes, one factory per resource file. The composition root passes the result
 * to `createApiServer`; a new resource adds its factory here.
 */
import type { ApiDeps } from '../deps.js';
import type { Route } from '../route-table.js';
import { accountTokenRoutes } from './account-tokens.js';
import { accountRoutes } from './accounts.js';
import { policyRoutes } from './alert-policies.js';
import { availableAlertRoutes } from './available-alerts.js';
import { deliveryRoutes } from './deliveries.js';
import { destinationRoutes } from './destinations.js';
import { gatewayIncidentRoutes } from './gateway-incidents.js';
import { gatewayKeyRoutes } from './gateway-keys.js';
import { gatewayNetworkRoutes } from './gateway-networks.js';
import { healthEventRoutes } from './health-events.js';
import { historyRoutes } from './history.js';
import { monitorRoutes } from './monitors.js';
import { notificationMigrationRoutes } from './notification-migration.js';
import { originStatsRoutes } from './origin-stats.js';
import { poolRoutes } from './pools.js';
import { transactionRoutes } from './transactions.js';
import { userTokenRoutes } from './user-tokens.js';

export function coreRoutes(deps: ApiDeps): Route[] {
  return [
    ...userTokenRoutes(deps),
    ...accountTokenRoutes(deps),
    ...poolRoutes(deps),
    ...gatewayKeyRoutes(deps),
    ...monitorRoutes(deps),
    ...policyRoutes(deps),
    ...destinationRoutes(deps),
    ...historyRoutes(deps),
    ...availableAlertRoutes(deps),
    ...notificationMigrationRoutes(deps),
    ...accountRoutes(deps),
    ...healthEventRoutes(deps),
    ...deliveryRoutes(deps),
    ...originStatsRoutes(deps),
    ...gatewayNetworkRoutes(deps),
    ...gatewayIncidentRoutes(deps),
    ...transactionRoutes(deps),
  ];
}
