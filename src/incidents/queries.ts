/**
 * The `chain_incidents` table's queries (store/tables/incidents.ts has the rules). Every write is a
 * compare-and-set, so several processes on one store record one incident once:
 * - `openIncident` inserts with the unique `open_key`; a conflict means another process (or an earlier
 *   run of this one) has it open, and the open row is returned instead. A caller may also name what
 *   counts as the newest closed one seen late (a divergence another process already saw end).
 * - `closeIncident` closes only an open row (`status = 'open'`), once.
 * - `recordOneOff` inserts a closed row whose id derives from the event; a conflict means it is recorded.
 * - The dispatcher claims a START or END by flipping its flag from 0 to 1 in its own transaction.
 */
import type { Db } from '../store/database.js';
import type { ChainIncidentsTable } from '../store/tables/incidents.js';
import type { IncidentData, IncidentKind, IncidentRecord, IncidentScope } from './types.js';

/** A stored row as the incident it records (JSON columns parsed). */
export function toRecord(row: ChainIncidentsTable): IncidentRecord {
  return {
    id: row.id,
    network: row.network,
    kind: row.kind,
    status: row.status,
    data: JSON.parse(row.data) as IncidentData,
    scope: JSON.parse(row.scope) as IncidentScope,
    end_data: row.end_data === null ? undefined : (JSON.parse(row.end_data) as IncidentData),
    opened_at: row.opened_at,
    closed_at: row.closed_at ?? undefined,
    start_dispatched: Number(row.start_dispatched) === 1,
    end_dispatched: Number(row.end_dispatched) === 1,
  };
}

export interface NewIncident {
  id: string;
  network: string;
  kind: IncidentKind;
  data: IncidentData;
  scope: IncidentScope;
  at: string;
  /** What the incident is about within its network and kind, when several may be open (an origin). */
  subject?: string | undefined;
}

/** The unique key of an open incident (store/tables/incidents.ts). */
function openKey(network: string, kind: IncidentKind, subject: string | undefined): string {
  return subject === undefined ? `${network}:${kind}` : `${network}:${kind}:${subject}`;
}

/**
 * Opens the incident; when one of this network and kind is open already, returns that one (created false).
 * `covered` is asked about the newest closed incident of this network and kind, if any: true means the
 * new one is that one seen late (it ended already), and it is returned instead (created false).
 */
export async function openIncident(
  db: Db,
  incident: NewIncident,
  covered?: (closed: IncidentRecord) => boolean,
): Promise<{ record: IncidentRecord; created: boolean }> {
  const key = openKey(incident.network, incident.kind, incident.subject);
  if (covered !== undefined) {
    const last = await db
      .selectFrom('chain_incidents')
      .selectAll()
      .where('network', '=', incident.network)
      .where('kind', '=', incident.kind)
      .where('status', '=', 'closed')
      .orderBy('closed_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    const closed = last === undefined ? undefined : toRecord(last);
    if (closed !== undefined && covered(closed)) return { record: closed, created: false };
  }
  const result = await db
    .insertInto('chain_incidents')
    .values(incidentRow(incident, { status: 'open', open_key: key, closed_at: null, end_dispatched: 0 }))
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  const created = Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  const row = await db.selectFrom('chain_incidents').selectAll().where('open_key', '=', key).executeTakeFirst();
  if (row === undefined) {
    // Closed by another process between the insert and the read: nothing is open now.
    const mine = await db.selectFrom('chain_incidents').selectAll().where('id', '=', incident.id).executeTakeFirst();
    if (mine === undefined) throw new Error(`incident ${key} vanished while being opened`);
    return { record: toRecord(mine), created };
  }
  return { record: toRecord(row), created };
}

/** Closes the open incident of this network and kind; false when none was open (closed elsewhere). */
export async function closeIncident(
  db: Db,
  network: string,
  kind: IncidentKind,
  endData: IncidentData,
  at: string,
  subject?: string,
): Promise<boolean> {
  const result = await db
    .updateTable('chain_incidents')
    .set({ status: 'closed', open_key: null, end_data: JSON.stringify(endData), closed_at: at })
    .where('open_key', '=', openKey(network, kind, subject))
    .where('status', '=', 'open')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records a one-off incident (a reorg) under an id derived from it; false when it was recorded already. */
export async function recordOneOff(db: Db, incident: NewIncident): Promise<boolean> {
  const result = await db
    .insertInto('chain_incidents')
    // Closed at once, with no END to send.
    .values(incidentRow(incident, { status: 'closed', open_key: null, closed_at: incident.at, end_dispatched: 1 }))
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** A new incident's row: its START not dispatched yet; `state` says whether it stays open. */
function incidentRow(
  incident: NewIncident,
  state: { status: 'open' | 'closed'; open_key: string | null; closed_at: string | null; end_dispatched: 0 | 1 },
) {
  return {
    id: incident.id,
    network: incident.network,
    kind: incident.kind,
    data: JSON.stringify(incident.data),
    scope: JSON.stringify(incident.scope),
    end_data: null,
    opened_at: incident.at,
    start_dispatched: 0,
    ...state,
  };
}

/** The open incidents (a detector adopts them at start, so it can close what an earlier run opened). */
export async function openIncidents(db: Db): Promise<IncidentRecord[]> {
  const rows = await db.selectFrom('chain_incidents').selectAll().where('status', '=', 'open').execute();
  return rows.map(toRecord);
}

/** Incidents with a START or END not yet turned into deliveries, oldest first. */
export async function undispatchedIncidents(db: Db, limit: number): Promise<IncidentRecord[]> {
  const rows = await db
    .selectFrom('chain_incidents')
    .selectAll()
    .where((eb) =>
      eb.or([eb('start_dispatched', '=', 0), eb.and([eb('status', '=', 'closed'), eb('end_dispatched', '=', 0)])]),
    )
    .orderBy('opened_at')
    .limit(limit)
    .execute();
  return rows.map(toRecord);
}

/** Claims the START (or END) of an incident for dispatch; false when another dispatcher took it. */
export async function claimDispatch(db: Db, id: string, which: 'start' | 'end'): Promise<boolean> {
  const column = which === 'start' ? 'start_dispatched' : 'end_dispatched';
  const result = await db
    .updateTable('chain_incidents')
    .set({ [column]: 1 })
    .where('id', '=', id)
    .where(column, '=', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes closed, fully dispatched incidents that closed before `cutoff`; returns how many went. */
export async function pruneIncidents(db: Db, cutoff: string): Promise<number> {
  const result = await db
    .deleteFrom('chain_incidents')
    .where('status', '=', 'closed')
    .where('start_dispatched', '=', 1)
    .where('end_dispatched', '=', 1)
    .where('closed_at', '<', cutoff)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
