/** The migration status: the pools still carrying a legacy `notification_email`, refreshed every 4 s. */
import { usePoll } from '../hooks.js';
import type { MigrationStatus, PoolItem } from '../types.js';
import type { ViewProps } from '../view.js';

function LegacyPools({ pools }: { pools: PoolItem[] }) {
  return (
    <table aria-labelledby="migration-title">
      <thead>
        <tr>
          <th scope="col">Pool</th>
          <th scope="col">Legacy notification_email</th>
        </tr>
      </thead>
      <tbody>
        {pools.map((p) => (
          <tr key={p.id}>
            <td>{p.name}</td>
            <td>{p.notification_email}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function MigrationView({ client, onSessionEnded }: ViewProps) {
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
      {legacy.length > 0 ? <LegacyPools pools={legacy} /> : null}
    </section>
  );
}
