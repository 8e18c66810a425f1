/**
 * The delivery queue (`GET …/alerting/v3/deliveries`: pending, failing with the last error and next
 * attempt, dead-lettered) with a confirmed retry of a dead-lettered delivery (write token), and the
 * history of sent notifications (`GET …/alerting/v3/history`), both refreshed every 4 s. Webhook
 * destinations are named by name (webhook-names.ts).
 */
import type { Client } from '../api.js';
import { ConfirmAction } from '../confirm.js';
import { time } from '../format.js';
import { usePoll } from '../hooks.js';
import type { Delivery, HistoryItem } from '../types.js';
import type { ViewProps } from '../view.js';
import { type MechanismLabel, useMechanismLabel } from '../webhook-names.js';

const STATE_BADGE: Record<Delivery['state'], string> = {
  dead: 'badge bad',
  failing: 'badge warn',
  pending: 'badge',
  sent: 'badge',
  cancelled: 'badge',
};

async function retry(client: Client, id: string): Promise<string> {
  await client.call('POST', `/accounts/{account}/alerting/v3/deliveries/${encodeURIComponent(id)}/retry`);
  return 'queued for one more attempt';
}

function QueueRow({
  d,
  label,
  reload,
  ...props
}: { d: Delivery; label: MechanismLabel; reload: () => void } & ViewProps) {
  const to = label(d.mechanism_type, d.mechanism);
  return (
    <tr>
      <td>
        <span class={STATE_BADGE[d.state]}>{d.state}</span>
      </td>
      <td>{d.name}</td>
      <td>{to}</td>
      <td class="n">{d.attempts}</td>
      <td>{d.last_error ?? '—'}</td>
      <td>{time(d.next_attempt_at)}</td>
      {props.canWrite ? (
        <td>
          {d.state === 'dead' ? (
            <ConfirmAction
              label="Retry"
              question={`Retry the dead-lettered delivery "${d.name}" to ${to} now?`}
              run={async () => {
                const text = await retry(props.client, d.id);
                reload();
                return text;
              }}
              onSessionEnded={props.onSessionEnded}
            />
          ) : null}
        </td>
      ) : null}
    </tr>
  );
}

function QueueTable({ rows, ...rest }: { rows: Delivery[]; label: MechanismLabel; reload: () => void } & ViewProps) {
  return (
    <table aria-label="Delivery queue">
      <thead>
        <tr>
          <th scope="col">State</th>
          <th scope="col">Notification</th>
          <th scope="col">To</th>
          <th scope="col">Attempts</th>
          <th scope="col">Last error</th>
          <th scope="col">Next attempt</th>
          {rest.canWrite ? <th scope="col">Action</th> : null}
        </tr>
      </thead>
      <tbody>
        {rows.map((d) => (
          <QueueRow key={d.id} d={d} {...rest} />
        ))}
      </tbody>
    </table>
  );
}

function HistoryTable({ rows, label }: { rows: HistoryItem[]; label: MechanismLabel }) {
  return (
    <table aria-labelledby="history-title">
      <thead>
        <tr>
          <th scope="col">Sent</th>
          <th scope="col">Notification</th>
          <th scope="col">Type</th>
          <th scope="col">To</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((h) => (
          <tr key={h.id}>
            <td>{time(h.sent)}</td>
            <td>{h.name}</td>
            <td>{h.alert_type}</td>
            <td>{label(h.mechanism_type, h.mechanism)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function DeliveriesView(props: ViewProps) {
  const { client, onSessionEnded } = props;
  const queue = usePoll(
    () => client.get<Delivery[]>('/accounts/{account}/alerting/v3/deliveries?per_page=100'),
    onSessionEnded,
  );
  const history = usePoll(
    () => client.get<HistoryItem[]>('/accounts/{account}/alerting/v3/history?per_page=50'),
    onSessionEnded,
  );
  const label = useMechanismLabel(props);
  const waiting = queue.data ?? [];
  const sent = history.data ?? [];
  return (
    <section aria-labelledby="queue-title">
      <h2 id="queue-title">Delivery queue</h2>
      {queue.error !== undefined ? <p class="error">{queue.error}</p> : null}
      {queue.data?.length === 0 ? <p>Nothing waiting: every notification was delivered.</p> : null}
      {waiting.length > 0 ? <QueueTable rows={waiting} label={label} reload={queue.reload} {...props} /> : null}
      <h2 id="history-title">History</h2>
      {history.error !== undefined ? <p class="error">{history.error}</p> : null}
      {history.data?.length === 0 ? <p>No notification sent yet.</p> : null}
      {sent.length > 0 ? <HistoryTable rows={sent} label={label} /> : null}
    </section>
  );
}
