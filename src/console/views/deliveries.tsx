/**
 * The delivery queue (`GET …/alerting/v3/deliveries`: pending, failing with the last error and next
 * attempt, dead-lettered) with a confirmed retry of a dead-lettered delivery (write token), and the
 * history of sent notifications (`GET …/alerting/v3/history`), both refreshed every 4 s.
 */
import type { Client } from '../api.js';
import { ConfirmAction } from '../confirm.js';
import { time } from '../format.js';
import { usePoll } from '../hooks.js';
import type { Delivery, HistoryItem } from '../types.js';

interface Props {
  client: Client;
  canWrite: boolean;
  onSessionEnded: (message: string) => void;
}

export function DeliveriesView({ client, canWrite, onSessionEnded }: Props) {
  const queue = usePoll(
    () => client.get<Delivery[]>('/accounts/{account}/alerting/v3/deliveries?per_page=100'),
    onSessionEnded,
  );
  const history = usePoll(
    () => client.get<HistoryItem[]>('/accounts/{account}/alerting/v3/history?per_page=50'),
    onSessionEnded,
  );
  return (
    <section aria-labelledby="queue-title">
      <h2 id="queue-title">Delivery queue</h2>
      {queue.error !== undefined ? <p class="error">{queue.error}</p> : null}
      {queue.data?.length === 0 ? <p>Nothing waiting: every notification was delivered.</p> : null}
      {(queue.data?.length ?? 0) > 0 ? (
        <table aria-label="Delivery queue">
          <thead>
            <tr>
              <th scope="col">State</th>
              <th scope="col">Notification</th>
              <th scope="col">To</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last error</th>
              <th scope="col">Next attempt</th>
              {canWrite ? <th scope="col">Action</th> : null}
            </tr>
          </thead>
          <tbody>
            {(queue.data ?? []).map((d) => (
              <tr key={d.id}>
                <td>
                  <span class={d.state === 'dead' ? 'badge bad' : d.state === 'failing' ? 'badge warn' : 'badge'}>
                    {d.state}
                  </span>
                </td>
                <td>{d.name}</td>
                <td>
                  {d.mechanism_type} {d.mechanism}
                </td>
                <td class="n">{d.attempts}</td>
                <td>{d.last_error ?? '—'}</td>
                <td>{time(d.next_attempt_at)}</td>
                {canWrite ? (
                  <td>
                    {d.state === 'dead' ? (
                      <ConfirmAction
                        label="Retry"
                        question={`Retry the dead-lettered delivery "${d.name}" to ${d.mechanism} now?`}
                        run={async () => {
                          await client.call(
                            'POST',
                            `/accounts/{account}/alerting/v3/deliveries/${encodeURIComponent(d.id)}/retry`,
                          );
                          queue.reload();
                          return 'queued for one more attempt';
                        }}
                        onSessionEnded={onSessionEnded}
                      />
                    ) : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <h2 id="history-title">History</h2>
      {history.error !== undefined ? <p class="error">{history.error}</p> : null}
      {history.data?.length === 0 ? <p>No notification sent yet.</p> : null}
      {(history.data?.length ?? 0) > 0 ? (
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
            {(history.data ?? []).map((h) => (
              <tr key={h.id}>
                <td>{time(h.sent)}</td>
                <td>{h.name}</td>
                <td>{h.alert_type}</td>
                <td>
                  {h.mechanism_type} {h.mechanism}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
