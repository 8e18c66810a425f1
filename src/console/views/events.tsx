/** The health events timeline (`GET …/load_balancers/health_events`), newest first, refreshed every 4 s. */
import { time } from '../format.js';
import { usePoll } from '../hooks.js';
import type { HealthEvent } from '../types.js';
import type { ViewProps } from '../view.js';

export function EventsView({ client, onSessionEnded }: ViewProps) {
  const poll = usePoll(
    () => client.get<HealthEvent[]>('/accounts/{account}/load_balancers/health_events?per_page=100'),
    onSessionEnded,
  );
  return (
    <section aria-labelledby="events-title">
      <h2 id="events-title">Health events</h2>
      {poll.error !== undefined ? <p class="error">{poll.error}</p> : null}
      {poll.data?.length === 0 ? <p>No health changes recorded.</p> : null}
      <ol class="timeline">
        {(poll.data ?? []).map((event) => (
          <li key={event.id} class={event.new_health === 'Healthy' ? 'ok' : 'bad'}>
            <time dateTime={event.occurred_at}>{time(event.occurred_at)}</time>{' '}
            <strong>
              {event.event_source === 'origin'
                ? `Origin ${event.origin_name} of pool ${event.pool_name}`
                : `Pool ${event.pool_name}`}
            </strong>{' '}
            {event.previous} →{' '}
            <span class={event.new_health === 'Healthy' ? 'badge ok' : 'badge bad'}>{event.new_health}</span>
            {event.reason !== '' ? <span class="reason"> {event.reason}</span> : null}
          </li>
        ))}
      </ol>
    </section>
  );
}
