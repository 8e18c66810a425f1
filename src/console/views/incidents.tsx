/**
 * Chain incidents (SPEC §14) from `GET …/gateway/incidents`: the open ones (head stall, origin divergence,
 * finality stall) and the recent closed ones and reorgs, newest first, refreshed every 4 s. Each row says
 * what the alert said, where (network, the account's own pools by name) and when it began and ended.
 */
import { time } from '../format.js';
import { usePoll } from '../hooks.js';
import type { IncidentItem, IncidentKindName } from '../types.js';
import type { ViewProps } from '../view.js';

const KIND: Record<IncidentKindName, string> = {
  head_stall: 'Head stall',
  origin_divergence: 'Origin divergence',
  reorg: 'Reorg',
  finality_stall: 'Finality stall',
  origin_integrity: 'Origin integrity',
};

const RECENT = 50;
const INLINE_POOLS = 4;

function ended(incident: IncidentItem): string {
  if (incident.kind === 'reorg') return 'one-off';
  const block = incident.end_data?.block_number;
  return `${time(incident.closed_at)}${block === undefined ? '' : ` (block ${block})`}`;
}

/** The account's pools of the incident by name, a few inline, more behind a disclosure. */
function PoolNames({ incident }: { incident: IncidentItem }) {
  const names = incident.pools.map((pool) => pool.name ?? `deleted pool ${pool.id.slice(0, 8)}…`).sort();
  if (names.length <= INLINE_POOLS) return <>{names.join(', ') || '—'}</>;
  return (
    <details>
      <summary>{names.length} pools</summary>
      {names.join(', ')}
    </details>
  );
}

function IncidentTable({ rows, open, label }: { rows: IncidentItem[]; open: boolean; label: string }) {
  return (
    <table aria-label={label}>
      <thead>
        <tr>
          <th scope="col">Incident</th>
          <th scope="col">Network</th>
          <th scope="col">Began</th>
          {open ? null : <th scope="col">Ended</th>}
          <th scope="col">What</th>
          <th scope="col">Pools</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((incident) => (
          <tr key={incident.id} data-incident={incident.kind}>
            <th scope="row">
              <span class={open ? 'badge bad' : 'badge'}>{KIND[incident.kind]}</span>
            </th>
            <td>{incident.network}</td>
            <td>{time(incident.opened_at)}</td>
            {open ? null : <td>{ended(incident)}</td>}
            <td>{incident.summary}</td>
            <td>
              <PoolNames incident={incident} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function IncidentsView({ client, onSessionEnded }: ViewProps) {
  const open = usePoll(
    () => client.get<IncidentItem[]>('/accounts/{account}/gateway/incidents?status=open&per_page=100'),
    onSessionEnded,
  );
  const recent = usePoll(
    () => client.get<IncidentItem[]>(`/accounts/{account}/gateway/incidents?status=closed&per_page=${RECENT}`),
    onSessionEnded,
  );
  return (
    <section aria-labelledby="incidents-title">
      <h2 id="incidents-title">Chain incidents</h2>
      <p class="meta">
        Head stalls, origin divergences, reorgs and finality stalls on the networks of this account's pools; the same
        incidents raise the <code>switchyard_*_alert</code> notifications.
      </p>
      <h3 id="open-incidents-title">Open</h3>
      {open.error !== undefined ? <p class="error">{open.error}</p> : null}
      {open.data?.length === 0 ? <p>No open incident.</p> : null}
      {(open.data?.length ?? 0) > 0 ? <IncidentTable rows={open.data ?? []} open label="Open incidents" /> : null}
      <h3 id="recent-incidents-title">Recent</h3>
      {recent.error !== undefined ? <p class="error">{recent.error}</p> : null}
      {recent.data?.length === 0 ? <p>No incident ended within the retention period.</p> : null}
      {(recent.data?.length ?? 0) > 0 ? (
        <IncidentTable rows={recent.data ?? []} open={false} label="Recent incidents" />
      ) : null}
    </section>
  );
}
