/**
 * Networks → pools → origins, refreshed every 4 s from `GET …/load_balancers/origin_stats`: health and
 * its failure reason, head, lag, earliest block, p50 latency, requests/s and error rate (last 5 minutes,
 * summed over workers and instances). With a write token, each origin can be disabled or enabled
 * (after a confirmation) through `PATCH …/pools/{id}` with the pool's origins.
 */
import type { Client } from '../api.js';
import { ConfirmAction } from '../confirm.js';
import { ms, num, percent } from '../format.js';
import { usePoll } from '../hooks.js';
import type { OriginRow } from '../types.js';

interface Props {
  client: Client;
  canWrite: boolean;
  onSessionEnded: (message: string) => void;
}

interface PoolGroup {
  id: string;
  name: string;
  origins: OriginRow[];
}

function group(stats: readonly OriginRow[]): Map<string, Map<string, PoolGroup>> {
  const networks = new Map<string, Map<string, PoolGroup>>();
  for (const origin of stats) {
    for (const network of origin.networks.length > 0 ? origin.networks : ['(no network)']) {
      let pools = networks.get(network);
      if (pools === undefined) {
        pools = new Map();
        networks.set(network, pools);
      }
      let pool = pools.get(origin.pool_id);
      if (pool === undefined) {
        pool = { id: origin.pool_id, name: origin.pool_name, origins: [] };
        pools.set(origin.pool_id, pool);
      }
      pool.origins.push(origin);
    }
  }
  return networks;
}

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

export function OriginsView({ client, canWrite, onSessionEnded }: Props) {
  const poll = usePoll(
    () => client.get<OriginRow[]>('/accounts/{account}/load_balancers/origin_stats?per_page=1000'),
    onSessionEnded,
  );
  const networks = group(poll.data ?? []);
  return (
    <section aria-labelledby="origins-title">
      <h2 id="origins-title">Networks, pools and origins</h2>
      <p class="meta" aria-live="polite">
        {poll.error !== undefined ? <span class="error">{poll.error}</span> : null}
        {poll.updated !== undefined
          ? `Updated ${poll.updated.toLocaleTimeString('en-GB')} · refreshes every 4 s`
          : 'Loading…'}
      </p>
      {poll.data !== undefined && poll.data.length === 0 ? <p>No pools in this account yet.</p> : null}
      {[...networks].map(([network, pools]) => (
        <div class="network" key={network}>
          <h3>Network {network}</h3>
          {[...pools.values()].map((pool) => (
            <table key={pool.id} class="origins" aria-label={`Pool ${pool.name} on ${network}`}>
              <caption>
                Pool <strong>{pool.name}</strong>{' '}
                <span class={pool.origins.some((o) => o.healthy) ? 'badge ok' : 'badge bad'}>
                  {pool.origins.some((o) => o.healthy) ? 'serving' : 'no healthy origin'}
                </span>
              </caption>
              <thead>
                <tr>
                  <th scope="col">Origin</th>
                  <th scope="col">Health</th>
                  <th scope="col">Head</th>
                  <th scope="col">Lag</th>
                  <th scope="col">Earliest block</th>
                  <th scope="col">p50</th>
                  <th scope="col">Requests/s</th>
                  <th scope="col">Errors</th>
                  {canWrite ? <th scope="col">Action</th> : null}
                </tr>
              </thead>
              <tbody>
                {pool.origins.map((o) => (
                  <tr key={o.origin_name} data-origin={o.origin_name}>
                    <th scope="row">{o.origin_name}</th>
                    <td>
                      <span
                        class={o.healthy ? 'badge ok' : 'badge bad'}
                        data-health={o.healthy ? 'Healthy' : 'Unhealthy'}
                      >
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
                            const text = await setEnabled(client, pool.id, o.origin_name, !o.enabled);
                            poll.reload();
                            return text;
                          }}
                          onSessionEnded={onSessionEnded}
                        />
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          ))}
        </div>
      ))}
    </section>
  );
}
