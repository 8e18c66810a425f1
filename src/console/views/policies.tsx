/**
 * Notification policies and webhook destinations (read), refreshed every 15 s. Mechanisms name webhook
 * destinations by name (webhook-names.ts). With a write token a destination can be sent the test message
 * (after a confirmation).
 */
import type { Client } from '../api.js';
import { ConfirmAction } from '../confirm.js';
import { time } from '../format.js';
import { usePoll } from '../hooks.js';
import type { Destination, PolicyItem } from '../types.js';
import type { ViewProps } from '../view.js';
import { DESTINATIONS_REFRESH_MS, labelMechanism, type MechanismLabel, useDestinations } from '../webhook-names.js';

function PolicyCard({ policy, label }: { policy: PolicyItem; label: MechanismLabel }) {
  const to = [
    ...(policy.mechanisms.email ?? []).map((m) => label('email', m.id)),
    ...(policy.mechanisms.webhooks ?? []).map((m) => label('webhook', m.id)),
  ];
  return (
    <li data-policy={policy.name}>
      <strong>{policy.name}</strong>{' '}
      <span class={policy.enabled ? 'badge ok' : 'badge'}>{policy.enabled ? 'enabled' : 'disabled'}</span>
      <div class="meta">{policy.alert_type}</div>
      <div class="to">To: {to.join(', ') || '—'}</div>
      <div class="meta">
        Filters:{' '}
        {Object.entries(policy.filters)
          .map(([k, v]) => `${k} = ${v.join(' | ')}`)
          .join('; ') || 'none'}
      </div>
    </li>
  );
}

function DestinationCard({ destination: d, ...props }: { destination: Destination } & ViewProps) {
  return (
    <li data-destination={d.name}>
      <strong>{d.name}</strong> <span class="meta">id {d.id}</span>
      <div class="meta">
        Last success {time(d.last_success)} · last failure {time(d.last_failure)}
      </div>
      {props.canWrite ? (
        <ConfirmAction
          label={`Send a test alert to ${d.name}`}
          question={`Send the test message to webhook ${d.name}?`}
          run={() => sendTest(props.client, d.id)}
          onSessionEnded={props.onSessionEnded}
        />
      ) : null}
    </li>
  );
}

async function sendTest(client: Client, id: string): Promise<string> {
  await client.call('POST', `/accounts/{account}/alerting/v3/destinations/webhooks/${encodeURIComponent(id)}/test`);
  return 'test message delivered';
}

export function PoliciesView(props: ViewProps) {
  const { client, onSessionEnded } = props;
  const policies = usePoll(
    () => client.get<PolicyItem[]>('/accounts/{account}/alerting/v3/policies'),
    onSessionEnded,
    DESTINATIONS_REFRESH_MS,
  );
  const destinations = useDestinations(props);
  const label = labelMechanism(destinations.data);
  return (
    <section aria-labelledby="policies-title">
      <h2 id="policies-title">Notification policies</h2>
      {policies.error !== undefined ? <p class="error">{policies.error}</p> : null}
      {policies.data?.length === 0 ? (
        <p>No policy: health changes alert nobody (apart from legacy pool email).</p>
      ) : null}
      <ul class="cards">
        {(policies.data ?? []).map((p) => (
          <PolicyCard key={p.id} policy={p} label={label} />
        ))}
      </ul>
      <h2 id="destinations-title">Webhook destinations</h2>
      {destinations.error !== undefined ? <p class="error">{destinations.error}</p> : null}
      {destinations.data?.length === 0 ? <p>No webhook destination.</p> : null}
      <ul class="cards">
        {(destinations.data ?? []).map((d) => (
          <DestinationCard key={d.id} destination={d} {...props} />
        ))}
      </ul>
    </section>
  );
}
