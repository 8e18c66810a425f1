/**
 * Gateway keys (SPEC §11) from `GET …/gateway/keys`: name, state, networks, rate limit, daily quota and
 * last use; and for the key chosen in a labelled select, its usage per day over the last 30 days
 * (`GET …/gateway/keys/{id}/usage`: requests and errors, summed over networks, with each network's
 * share), newest day first. Both refresh every 4 s. Only the routing account has keys; for any other
 * the API's 403 says so.
 */
import { useState } from 'preact/hooks';
import { num, time } from '../format.js';
import { usePoll } from '../hooks.js';
import type { GatewayKeyItem, KeyUsageRow } from '../types.js';
import type { ViewProps } from '../view.js';

interface DayUsage {
  date: string;
  requests: number;
  errors: number;
  networks: Array<[string, number]>;
}

/** The API's rows (one per day and network) as one row per day, newest first. */
function byDay(rows: readonly KeyUsageRow[]): DayUsage[] {
  const days = new Map<string, DayUsage>();
  for (const row of rows) {
    let day = days.get(row.date);
    if (day === undefined) {
      day = { date: row.date, requests: 0, errors: 0, networks: [] };
      days.set(row.date, day);
    }
    day.requests += row.requests;
    day.errors += row.errors;
    day.networks.push([row.network, row.requests]);
  }
  return [...days.values()].sort((a, b) => (a.date < b.date ? 1 : -1));
}

function KeyUsage({ keyItem, client, onSessionEnded }: { keyItem: GatewayKeyItem } & ViewProps) {
  const usage = usePoll(
    () => client.get<KeyUsageRow[]>(`/accounts/{account}/gateway/keys/${encodeURIComponent(keyItem.id)}/usage`),
    onSessionEnded,
  );
  const days = byDay(usage.data ?? []);
  const label = keyItem.name === '' ? keyItem.id : keyItem.name;
  return (
    <>
      {usage.error !== undefined ? <p class="error">{usage.error}</p> : null}
      {usage.data?.length === 0 ? <p>No calls with key {label} in the last 30 days.</p> : null}
      {days.length > 0 ? (
        <table aria-label={`Usage of key ${label} per day`} data-usage-of={keyItem.id}>
          <caption>Usage of {label} per day, last 30 days (days without calls are left out)</caption>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Requests</th>
              <th scope="col">Errors</th>
              <th scope="col">By network</th>
            </tr>
          </thead>
          <tbody>
            {days.map((day) => (
              <tr key={day.date} data-date={day.date}>
                <th scope="row">{day.date}</th>
                <td class="n" data-requests={day.requests}>
                  {num(day.requests)}
                </td>
                <td class="n">{num(day.errors)}</td>
                <td>{day.networks.map(([network, n]) => `${network} ${num(n)}`).join(' · ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

function rateText(key: GatewayKeyItem): string {
  return key.rate_limit === null
    ? 'gateway default'
    : `${key.rate_limit.requests_per_second}/s, burst ${key.rate_limit.burst}`;
}

function KeyTable({ keys }: { keys: GatewayKeyItem[] }) {
  return (
    <table aria-label="Gateway keys">
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">State</th>
          <th scope="col">Networks</th>
          <th scope="col">Rate limit</th>
          <th scope="col">Daily quota</th>
          <th scope="col">Last used</th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => (
          <tr key={key.id} data-key={key.name}>
            <th scope="row">
              {key.name === '' ? '(no name)' : key.name} <span class="meta">{key.id}</span>
            </th>
            <td>
              <span class={key.enabled ? 'badge ok' : 'badge warn'}>{key.enabled ? 'enabled' : 'disabled'}</span>
            </td>
            <td>{key.networks === null ? 'all' : key.networks.join(', ')}</td>
            <td>{rateText(key)}</td>
            <td class="n">{key.daily_quota === null ? 'none' : num(key.daily_quota)}</td>
            <td>{time(key.last_used_on)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function KeysView(props: ViewProps) {
  const keys = usePoll(
    () => props.client.get<GatewayKeyItem[]>('/accounts/{account}/gateway/keys?per_page=1000'),
    props.onSessionEnded,
  );
  const [chosen, setChosen] = useState('');
  const list = keys.data ?? [];
  const current = list.find((k) => k.id === chosen) ?? list[0];
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">Gateway keys</h2>
      {keys.error !== undefined ? <p class="error">{keys.error}</p> : null}
      {keys.data?.length === 0 ? <p>No gateway key: calls use the static gateway.api_keys, or none.</p> : null}
      {list.length > 0 ? <KeyTable keys={list} /> : null}
      {current === undefined ? null : (
        <>
          <h3 id="usage-title">Usage per day</h3>
          <label for="usage-key">Key</label>{' '}
          <select id="usage-key" value={current.id} onChange={(e) => setChosen((e.target as HTMLSelectElement).value)}>
            {list.map((k) => (
              <option key={k.id} value={k.id}>
                {k.name === '' ? k.id : k.name}
              </option>
            ))}
          </select>
          <KeyUsage key={current.id} keyItem={current} {...props} />
        </>
      )}
    </section>
  );
}
