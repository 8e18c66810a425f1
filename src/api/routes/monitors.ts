/**
 * Monitors: `/accounts/:account_id/load_balancers/monitors` — list, create, get, put, patch, delete,
 * references. Deleting a monitor a pool uses is a 400 naming the pool. The list is ordered by creation
 * time and returns up to 1000 monitors by default (Cloudflare's monitor list is not paged, and the
 * SDK reads only one page); page/per_page or limit/offset work as for pools.
 */
import { z } from 'zod';
import { enforceAccountLimits } from '../../accounts/limits.js';
import {
  createMonitor,
  deleteMonitor,
  getMonitor,
  listMonitors,
  type Monitor,
  poolsUsingMonitor,
  saveMonitor,
} from '../../health/monitor-queries.js';
import { type MonitorSettings, withMonitorDefaults } from '../../model/monitor-schema.js';
import type { Db } from '../../store/database.js';
import { ID_PATTERN } from '../../store/ids.js';
import type { Opener } from '../../store/store-secrets.js';
import { inTransaction } from '../../store/transaction.js';
import type { ApiDeps } from '../deps.js';
import { fileOwnedMessages } from '../file-owned.js';
import { MAX_PER_PAGE, paginationQuery, parsePagination, resultInfo } from '../pagination.js';
import { accountParam, objectIdParam, objectNotFound } from '../path-params.js';
import { defineRoute, type Route } from '../route-table.js';
import { applyMonitorBody, monitorBody, monitorResult, monitorView, settingsOf } from '../schemas/monitors.js';

const BASE = '/accounts/:account_id/load_balancers/monitors';
const TAG = 'monitors';

export function monitorRoutes(deps: ApiDeps): Route[] {
  return [
    listMonitorsRoute(deps),
    createMonitorRoute(deps),
    getMonitorRoute(deps),
    replaceMonitorRoute(deps),
    patchMonitorRoute(deps),
    deleteMonitorRoute(deps),
    monitorReferencesRoute(deps),
  ];
}

const monitorId = (params: Readonly<Record<string, string>>) =>
  objectIdParam(params, 'monitor_id', 'monitor', ID_PATTERN);
const notFound = (id: string) => objectNotFound('monitor', id);

/** The stored monitor the path names, or 404. */
async function namedMonitor(db: Db, secrets: Opener, params: Readonly<Record<string, string>>): Promise<Monitor> {
  const monitor = await getMonitor(db, secrets, accountParam(params), monitorId(params));
  if (monitor === undefined) throw notFound(monitorId(params));
  return monitor;
}

/** PUT and PATCH: read, compute the new settings from the stored ones and save, in one transaction. */
async function changeMonitor(
  deps: ApiDeps,
  params: Readonly<Record<string, string>>,
  next: (current: MonitorSettings) => MonitorSettings,
) {
  const account = accountParam(params);
  const monitor = await inTransaction(deps.store.db, async (trx) => {
    const current = await getMonitor(trx, deps.secrets, account, monitorId(params));
    if (current === undefined) return undefined;
    const settings = next(settingsOf(current));
    // The probe budget depends on interval and retries only: other changes need no lock.
    if (settings.interval !== current.interval || settings.retries !== current.retries) {
      await enforceAccountLimits(trx, account, deps.config.limits, { monitor: { id: current.id, settings } });
    }
    return saveMonitor(trx, deps.secrets, deps.clock, account, monitorId(params), settings);
  });
  if (monitor === undefined) throw notFound(monitorId(params));
  await deps.poolsChanged();
  const users = await poolsUsingMonitor(deps.store.db, account, monitor.id);
  const owned = users.map((pool) => ({ account_id: account, name: pool.name }));
  return { result: monitorView(monitor), messages: fileOwnedMessages(deps.config, owned) };
}

function listMonitorsRoute({ store, secrets, logger }: ApiDeps): Route {
  return defineRoute({
    method: 'GET',
    path: BASE,
    auth: 'read',
    summary: `List monitors (oldest first; up to ${MAX_PER_PAGE} per page by default)`,
    tag: TAG,
    query: paginationQuery,
    result: z.array(monitorResult),
    paginated: true,
    async handler({ params, query }) {
      const page = parsePagination(query, { defaultPerPage: MAX_PER_PAGE });
      const { monitors, total } = await listMonitors(store.db, secrets, accountParam(params), page, (corrupt) =>
        logger.error('monitors: leaving out a monitor whose stored settings cannot be read', corrupt),
      );
      return { result: monitors.map(monitorView), result_info: resultInfo(page, monitors.length, total) };
    },
  });
}

function createMonitorRoute(deps: ApiDeps): Route {
  return defineRoute({
    method: 'POST',
    path: BASE,
    auth: 'write',
    summary: 'Create a monitor',
    tag: TAG,
    body: monitorBody,
    result: monitorResult,
    async handler({ params, body }) {
      const settings = applyMonitorBody(withMonitorDefaults({}), body);
      const monitor = await createMonitor(deps.store.db, deps.secrets, deps.clock, accountParam(params), settings);
      await deps.poolsChanged();
      return { result: monitorView(monitor) };
    },
  });
}

function getMonitorRoute({ store, secrets }: ApiDeps): Route {
  return defineRoute({
    method: 'GET',
    path: `${BASE}/:monitor_id`,
    auth: 'read',
    summary: 'Get a monitor',
    tag: TAG,
    result: monitorResult,
    async handler({ params }) {
      return { result: monitorView(await namedMonitor(store.db, secrets, params)) };
    },
  });
}

function replaceMonitorRoute(deps: ApiDeps): Route {
  return defineRoute({
    method: 'PUT',
    path: `${BASE}/:monitor_id`,
    auth: 'write',
    summary: 'Replace a monitor (omitted fields take their defaults)',
    tag: TAG,
    body: monitorBody,
    result: monitorResult,
    async handler({ params, body }) {
      return changeMonitor(deps, params, (current) => applyMonitorBody(withMonitorDefaults({}), body, current));
    },
  });
}

function patchMonitorRoute(deps: ApiDeps): Route {
  return defineRoute({
    method: 'PATCH',
    path: `${BASE}/:monitor_id`,
    auth: 'write',
    summary: 'Change the named fields of a monitor',
    tag: TAG,
    body: monitorBody,
    result: monitorResult,
    async handler({ params, body }) {
      return changeMonitor(deps, params, (current) => applyMonitorBody(current, body, current));
    },
  });
}

function deleteMonitorRoute(deps: ApiDeps): Route {
  return defineRoute({
    method: 'DELETE',
    path: `${BASE}/:monitor_id`,
    auth: 'write',
    summary: 'Delete a monitor (refused while a pool uses it)',
    tag: TAG,
    result: z.object({ id: z.string() }),
    async handler({ params }) {
      const id = monitorId(params);
      if (!(await deleteMonitor(deps.store.db, accountParam(params), id))) throw notFound(id);
      await deps.poolsChanged();
      return { result: { id } };
    },
  });
}

function monitorReferencesRoute({ store, secrets }: ApiDeps): Route {
  return defineRoute({
    method: 'GET',
    path: `${BASE}/:monitor_id/references`,
    auth: 'read',
    summary: 'Pools that use the monitor',
    tag: TAG,
    result: z.array(
      z.object({
        reference_type: z.literal('referrer'),
        resource_id: z.string(),
        resource_name: z.string(),
        resource_type: z.literal('pool'),
      }),
    ),
    async handler({ params }) {
      const monitor = await namedMonitor(store.db, secrets, params);
      const pools = await poolsUsingMonitor(store.db, accountParam(params), monitor.id);
      return {
        result: pools.map((pool) => ({
          reference_type: 'referrer',
          resource_id: pool.id,
          resource_name: pool.name,
          resource_type: 'pool',
        })),
      };
    },
  });
}
