/**
 * Monitors: `/accounts/:account_id/load_balancers/monitors` — list, create, get, put, patch, delete,
 * references. Deleting a monitor a pool uses is a 400 naming the pool. The list is ordered by creation
 * time and returns up to 1000 monitors by default (Cloudflare's monitor list is not paged, and the
 * SDK reads only one page); page/per_page or limit/offset work as for pools.
 */
import { z } from 'zod';
import {
  createMonitor,
  deleteMonitor,
  getMonitor,
  listMonitors,
  poolsUsingMonitor,
  saveMonitor,
} from '../../health/monitor-queries.js';
import { type MonitorSettings, withMonitorDefaults } from '../../model/monitor-schema.js';
import { ID_PATTERN } from '../../store/ids.js';
import { inTransaction } from '../../store/transaction.js';
import type { ApiDeps } from '../deps.js';
import { enforceAccountLimits } from '../limits.js';
import { MAX_PER_PAGE, paginationQuery, parsePagination, resultInfo } from '../pagination.js';
import { accountParam, objectIdParam, objectNotFound } from '../path-params.js';
import { defineRoute, type Route } from '../route-table.js';
import { applyMonitorBody, monitorBody, monitorResult, monitorView, settingsOf } from '../schemas/monitors.js';

const BASE = '/accounts/:account_id/load_balancers/monitors';
const TAG = 'monitors';

export function monitorRoutes(deps: ApiDeps): Route[] {
  const { store, secrets, clock } = deps;
  const db = store.db;
  const account = accountParam;
  const monitorId = (params: Readonly<Record<string, string>>) =>
    objectIdParam(params, 'monitor_id', 'monitor', ID_PATTERN);
  const notFound = (id: string) => objectNotFound('monitor', id);
  /** PUT and PATCH: read, compute the new settings from the stored ones and save, in one transaction. */
  const change = async (
    params: Readonly<Record<string, string>>,
    next: (current: MonitorSettings) => MonitorSettings,
  ) => {
    const monitor = await inTransaction(db, async (trx) => {
      const current = await getMonitor(trx, secrets, account(params), monitorId(params));
      if (current === undefined) return undefined;
      const settings = next(settingsOf(current));
      // The probe budget depends on interval and retries only: other changes need no lock.
      if (settings.interval !== current.interval || settings.retries !== current.retries) {
        await enforceAccountLimits(trx, account(params), deps.config.limits, {
          monitor: { id: current.id, settings },
        });
      }
      return saveMonitor(trx, secrets, clock, account(params), monitorId(params), settings);
    });
    if (monitor === undefined) throw notFound(monitorId(params));
    await deps.poolsChanged();
    return { result: monitorView(monitor) };
  };

  return [
    defineRoute({
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
        const { monitors, total } = await listMonitors(db, secrets, account(params), page, (corrupt) =>
          deps.logger.error('monitors: leaving out a monitor whose stored settings cannot be read', corrupt),
        );
        return { result: monitors.map(monitorView), result_info: resultInfo(page, monitors.length, total) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: BASE,
      auth: 'write',
      summary: 'Create a monitor',
      tag: TAG,
      body: monitorBody,
      result: monitorResult,
      async handler({ params, body }) {
        const settings = applyMonitorBody(withMonitorDefaults({}), body);
        const monitor = await createMonitor(db, secrets, clock, account(params), settings);
        await deps.poolsChanged();
        return { result: monitorView(monitor) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${BASE}/:monitor_id`,
      auth: 'read',
      summary: 'Get a monitor',
      tag: TAG,
      result: monitorResult,
      async handler({ params }) {
        const monitor = await getMonitor(db, secrets, account(params), monitorId(params));
        if (monitor === undefined) throw notFound(monitorId(params));
        return { result: monitorView(monitor) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: `${BASE}/:monitor_id`,
      auth: 'write',
      summary: 'Replace a monitor (omitted fields take their defaults)',
      tag: TAG,
      body: monitorBody,
      result: monitorResult,
      async handler({ params, body }) {
        return change(params, (current) => applyMonitorBody(withMonitorDefaults({}), body, current));
      },
    }),
    defineRoute({
      method: 'PATCH',
      path: `${BASE}/:monitor_id`,
      auth: 'write',
      summary: 'Change the named fields of a monitor',
      tag: TAG,
      body: monitorBody,
      result: monitorResult,
      async handler({ params, body }) {
        return change(params, (current) => applyMonitorBody(current, body, current));
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: `${BASE}/:monitor_id`,
      auth: 'write',
      summary: 'Delete a monitor (refused while a pool uses it)',
      tag: TAG,
      result: z.object({ id: z.string() }),
      async handler({ params }) {
        if (!(await deleteMonitor(db, account(params), monitorId(params)))) throw notFound(monitorId(params));
        await deps.poolsChanged();
        return { result: { id: monitorId(params) } };
      },
    }),
    defineRoute({
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
        const monitor = await getMonitor(db, secrets, account(params), monitorId(params));
        if (monitor === undefined) throw notFound(monitorId(params));
        const pools = await poolsUsingMonitor(db, account(params), monitor.id);
        return {
          result: pools.map((pool) => ({
            reference_type: 'referrer',
            resource_id: pool.id,
            resource_name: pool.name,
            resource_type: 'pool',
          })),
        };
      },
    }),
  ];
}
