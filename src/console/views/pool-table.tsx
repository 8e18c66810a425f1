/**
 * One pool of the origins view: its place in the network's failover order and role (layout.ts), then
 * its origins with health and the failure reason, head, lag, earliest block, p50 latency, requests/s
 * and error rate. With a write token, each origin can be disabled or enabled (after a confirmation)
 * through `PATCH …/pools/{id}` with the pool's origins.
 */
import type { Client } from '../api.js';
import { ConfirmAction } from '../confirm.js';
import { ms, num, percent } from '../format.js';
import type { PoolGroup, PoolRole } from '../layout.js';
import type { OriginRow } from '../types.js';
import type { ViewProps } from '../view.js';

const ROLE: Record<PoolRole, { text: string; badge: string }> = {
  serving: { text: 'serving', badge: 'badge ok' },
  standby: { text: 'standby', badge: 'badge' },
  healthy: { text: 'healthy', badge: 'badge ok' },
  unhealthy: { text: 'no healthy origin', badge: 'badge bad' },
  disabled: { text: 'disabled', badge: 'badge warn' },
  missing: { text: 'not created yet', badge: 'badge warn' },
};

async function setEnabled(client: Client, poolId: string, originName: string, enabled: boolean): Promise<string> {
  const path = `/accounts/{account}/load_balancers/pools/${encodeURIComponent(poolId)}`;
  const pool = await client.get<{ origins: Array<Record<string, unknown>> }>(path);
  // Read-only fields stay out; masked secrets (***) are resolved to the stored values by the API.
  const origins = pool.origins.map(({ healthy: _h, disabled_at: _d, ...origin }) =>
    origin.name === originName ? { ...origin, enabled } : origin,
  );
  await client.call('PATCH', path, { origins });
  return `${originName} ${enabled ? 'enabled' : 'disabled'}`;
}

interface RowProps extends ViewProps {
  pool: PoolGroup;
  origin: OriginRow;
  reload: () => void;
}

function OriginLine({ pool, origin: o, reload, client, canWrite, onSessionEnded }: RowProps) {
  return (
    <tr data-origin={o.origin_name}>
      <th scope="row">{o.origin_name}</th>
      <td>
        <span class={o.healthy ? 'badge ok' : 'badge bad'} data-health={o.healthy ? 'Healthy' : 'Unhealthy'}>
          {o.healthy ? 'Healthy' : 'Unhealthy'}
        </span>
        {!o.healthy && o.failure_reason !== '' ? <span class="reason"> {o.failure_reason}</span> : null}
        {o.syncing ? <span class="reason"> syncing</span> : null}
      </td>
      <td class="n">{num(o.head)}</td>
      <td class="n">{num(o.lag)}</td>
      <td class="n">{num(o.earliest_block)}</td>
      <td class="n" data-p50={o.p50_ms ?? ''}>
        {ms(o.p50_ms)}
      </td>
      <td class="n">{o.requests_per_second.toFixed(2)}</td>
      <td class="n">
        {percent(o.error_rate)} <span class="meta">({num(o.errors)})</span>
      </td>
      {canWrite ? (
        <td>
          <ConfirmAction
            label={o.enabled ? `Disable ${o.origin_name}` : `Enable ${o.origin_name}`}
            question={`${o.enabled ? 'Disable' : 'Enable'} origin ${o.origin_name} of pool ${pool.name}?`}
            run={async () => {
              const text = await setEnabled(client, pool.id as string, o.origin_name, !o.enabled);
              reload();
              return text;
            }}
            onSessionEnded={onSessionEnded}
          />
        </td>
      ) : null}
    </tr>
  );
}

export function PoolTable({
  pool,
  where,
  ...props
}: { pool: PoolGroup; where: string; reload: () => void } & ViewProps) {
  const role = ROLE[pool.role];
  const caption = (
    <caption>
      {pool.position === null ? null : <span class="position">{pool.position}.</span>} Pool <strong>{pool.name}</strong>{' '}
      <span class={role.badge} data-role={pool.role}>
        {role.text}
      </span>
    </caption>
  );
  if (pool.id === null) {
    return (
      <table class="origins" data-pool={pool.name} aria-label={`Pool ${pool.name} ${where}`}>
        {caption}
        <tbody>
          <tr>
            <td class="meta">No pool has this name yet; the network skips it until one is created.</td>
          </tr>
        </tbody>
      </table>
    );
  }
  return (
    <table class="origins" data-pool={pool.name} aria-label={`Pool ${pool.name} ${where}`}>
      {caption}
      <thead>
        <tr>
          <th scope="col">Origin</th>
          <th scope="col">Health</th>
          <th scope="col" class="n">
            Head
          </th>
          <th scope="col" class="n">
            Lag
          </th>
          <th scope="col" class="n">
            Earliest block
          </th>
          <th scope="col" class="n">
            p50
          </th>
          <th scope="col" class="n">
            Requests/s
          </th>
          <th scope="col" class="n">
            Errors
          </th>
          {props.canWrite ? <th scope="col">Action</th> : null}
        </tr>
      </thead>
      <tbody>
        {pool.origins.map((o) => (
          <OriginLine key={o.origin_name} pool={pool} origin={o} {...props} />
        ))}
      </tbody>
    </table>
  );
}
