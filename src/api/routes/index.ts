/**
 * The management API's routes, one factory per resource file. The composition root passes the result
 * to `createApiServer`; a new resource adds its factory here.
 */
import type { ApiDeps } from '../deps.js';
import type { Route } from '../router.js';
import { monitorRoutes } from './monitors.js';
import { poolRoutes } from './pools.js';
import { userTokenRoutes } from './user-tokens.js';

export function coreRoutes(deps: ApiDeps): Route[] {
  return [...userTokenRoutes(), ...poolRoutes(deps), ...monitorRoutes(deps)];
}
