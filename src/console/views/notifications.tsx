/**
 * Notification policies and webhook destinations (read), and the migration status: the pools still
 * carrying a legacy `notification_email`. With a write token a destination can be sent the test message
 * (after a confirmation).
 */
import type { Client } from '../api.js';
import { ConfirmAction } from '../confirm.js';
import { time } from '../format.js';
import { usePoll } from '../hooks.js';
import type { Destination, MigrationStatus, PolicyItem, PoolItem } from '../types.js';

interface Props {
  client: Client;
  canWrite: boolean;
  onSessionEnded: (message: string) => void;
}

export function PoliciesView({ client, canWrite, onSessionEnded }: Props) {
  const policies = usePoll(
    () => client.get<PolicyItem[]>('/accounts/{account}/alerting/v3/policies'),
    onSessionEnded,
    15_000,
  );
  const destinations = usePoll(
    () => client.get<Destination[]>('/accounts/{account}/alerting/v3/destinations/webhooks'),
    onSessionEnded,
    15_000,
  );
  return (
    <section aria-labelledby="policies-title">
      <h2 id="policies-title">Notification policies</h2>
      {policies.error !== undefined ? <p class="error">{policies.error}</p> : null}
      {policies.data?.length === 0 ? (
        <p>No policy: health changes alert nobody (apart from legacy pool email).</p>
      ) : null}
      <ul class="cards">
        {(policies.data ?? []).map((p) => (
          <li key={p.id}>
            <strong>{p.name}</strong>{' '}
            <span class={p.enabled ? 'badge ok' : 'badge'}>{p.enabled ? 'enabled' : 'disabled'}</span>
            <div class="meta">{p.alert_type}</div>
            <div>
              To:{' '}
              {[
                ...(p.mechanisms.email ?? []).map((m) => m.id),
                ...(p.mechanisms.webhooks ?? []).map((m) => `webhook ${m.id}`),
              ].join(', ') || '—'}
            </div>
            <div class="meta">
              Filters:{' '}
              {Object.entries(p.filters)
                .map(([k, v]) => `${k} = ${v.join(' | ')}`)
                .join('; ') || 'none'}
            </div>
          </li>
        ))}
      </ul>
      <h2 id="destinations-title">Webhook destinations</h2>
      {destinations.error !== undefined ? <p class="error">{destinations.error}</p> : null}
      {destinations.data?.length === 0 ? <p>No webhook destination.</p> : null}
      <ul class="cards">
        {(destinations.data ?? []).map((d) => (
          <li key={d.id}>
            <strong>{d.name}</strong> <span class="meta">{d.id}</span>
            <div class="meta">
              Last success {time(d.last_success)} · last failure {time(d.last_failure)}
            </div>
            {canWrite ? (
              <ConfirmAction
                label={`Send a test alert to ${d.name}`}
                question={`Send the test message to webhook ${d.name}?`}
                run={async () => {
                  await client.call(
                    'POST',
                    `/accounts/{account}/alerting/v3/destinations/webhooks/${encodeURIComponent(d.id)}/test`,
                  );
                  return 'test message delivered';
                }}
                onSessionEnded={onSessionEnded}
              />
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function MigrationView({ client, onSessionEnded }: Omit<Props, 'canWrite'>) {
  const status = usePoll(
    () => client.get<MigrationStatus>('/accounts/{account}/load_balancers/notification_migration'),
    onSessionEnded,
  );
  const pools = usePoll(
    () => client.get<PoolItem[]>('/accounts/{account}/load_balancers/pools?per_page=1000'),
    onSessionEnded,
  );
  const legacy = (pools.data ?? []).filter((p) => p.notification_email !== '');
  return (
    <section aria-labelledby="migration-title">
      <h2 id="migration-title">Migration off legacy pool email</h2>
      {status.error !== undefined ? <p class="error">{status.error}</p> : null}
      {status.data === undefined ? null : status.data.complete ? (
        <p>
          <span class="badge ok">complete</span> No pool carries a legacy <code>notification_email</code>; no
          deprecation notice is sent.
        </p>
      ) : (
        <p>
          <span class="badge warn">incomplete</span> {status.data.pools_with_legacy_email} pool(s) still email{' '}
          {status.data.addresses.join(', ')} directly. Create a notification policy, then clear them with{' '}
          <code>switchyard migrate-notifications</code> (docs/migration.md).
        </p>
      )}
      {legacy.length > 0 ? (
        <table aria-labelledby="migration-title">
          <thead>
            <tr>
              <th scope="col">Pool</th>
              <th scope="col">Legacy notification_email</th>
            </tr>
          </thead>
          <tbody>
            {legacy.map((p) => (
              <tr key={p.id}>
                <td>{p.name}</td>
                <td>{p.notification_email}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
