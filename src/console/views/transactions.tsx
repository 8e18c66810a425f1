/**
 * The transaction ledger (`GET …/gateway/transactions`, docs/ledger.md): what was sent through the
 * gateway, newest first, 50 a page, refreshed every 4 s — filtered by status and sender, with each
 * record's history of states behind a disclosure. Only the routing account has transactions; another
 * account sees the API's answer saying so.
 */
import { useEffect, useState } from 'preact/hooks';
import { num, time } from '../format.js';
import { usePoll } from '../hooks.js';
import type { TransactionItem } from '../types.js';
import type { ViewProps } from '../view.js';

const PER_PAGE = 50;
const STATUSES = ['pending', 'included', 'final', 'replaced', 'dropped'] as const;
const BADGE: Record<TransactionItem['status'], string> = {
  pending: 'badge warn',
  included: 'badge',
  final: 'badge ok',
  replaced: 'badge bad',
  dropped: 'badge bad',
};

/** 0x1234…abcd: the whole hash is in the title (and in the history). */
function short(hex: string): string {
  return hex.length > 14 ? `${hex.slice(0, 8)}…${hex.slice(-4)}` : hex;
}

export function TransactionsView({ client, onSessionEnded }: ViewProps) {
  const [status, setStatus] = useState('');
  const [from, setFrom] = useState('');
  const [page, setPage] = useState(1);
  const query = new URLSearchParams({ per_page: String(PER_PAGE), page: String(page) });
  if (status !== '') query.set('status', status);
  if (/^0x[0-9a-fA-F]{40}$/.test(from.trim())) query.set('from', from.trim());
  const path = `/accounts/{account}/gateway/transactions?${query.toString()}`;
  const poll = usePoll(() => client.get<TransactionItem[]>(path), onSessionEnded);
  // A new filter or page is asked for at once, not at the next refresh.
  const { reload } = poll;
  useEffect(() => reload(), [path]);
  const rows = poll.data ?? [];
  return (
    <section aria-labelledby="transactions-title">
      <h2 id="transactions-title">Transactions</h2>
      <Filters
        status={status}
        from={from}
        onStatus={(value) => {
          setStatus(value);
          setPage(1);
        }}
        onFrom={(value) => {
          setFrom(value);
          setPage(1);
        }}
      />
      {poll.error !== undefined ? <p class="error">{poll.error}</p> : null}
      {poll.data?.length === 0 ? <p>No transactions sent through the gateway match.</p> : null}
      {rows.length > 0 ? (
        <table aria-labelledby="transactions-title">
          <thead>
            <tr>
              <th scope="col">First seen</th>
              <th scope="col">Status</th>
              <th scope="col">Network</th>
              <th scope="col">Hash</th>
              <th scope="col">From</th>
              <th scope="col">Nonce</th>
              <th scope="col">Block</th>
              <th scope="col">History</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((tx) => (
              <Row key={`${tx.network}/${tx.hash}`} tx={tx} />
            ))}
          </tbody>
        </table>
      ) : null}
      <p>
        <button type="button" disabled={page === 1} onClick={() => setPage(page - 1)}>
          Newer
        </button>{' '}
        <button type="button" disabled={rows.length < PER_PAGE} onClick={() => setPage(page + 1)}>
          Older
        </button>{' '}
        <span class="meta">page {page}</span>
      </p>
    </section>
  );
}

interface FiltersProps {
  status: string;
  from: string;
  onStatus(value: string): void;
  onFrom(value: string): void;
}

function Filters({ status, from, onStatus, onFrom }: FiltersProps) {
  return (
    <form class="filters" onSubmit={(e) => e.preventDefault()}>
      <label for="tx-status">Status</label>{' '}
      <select id="tx-status" value={status} onChange={(e) => onStatus((e.target as HTMLSelectElement).value)}>
        <option value="">any</option>
        {STATUSES.map((value) => (
          <option key={value} value={value}>
            {value}
          </option>
        ))}
      </select>{' '}
      <label for="tx-from">Sender</label>{' '}
      <input
        id="tx-from"
        value={from}
        placeholder="0x…"
        spellcheck={false}
        onInput={(e) => onFrom((e.target as HTMLInputElement).value)}
      />
    </form>
  );
}

/** One record: its columns, and its history behind a disclosure (keyboard: Enter or Space on it). */
function Row({ tx }: { tx: TransactionItem }) {
  return (
    <tr data-tx={tx.hash}>
      <td>{time(tx.first_seen)}</td>
      <td>
        <span class={BADGE[tx.status]} data-status={tx.status}>
          {tx.status}
        </span>
        {tx.replaced_by !== null ? (
          <span class="reason" title={tx.replaced_by}>
            {' '}
            by {short(tx.replaced_by)}
          </span>
        ) : null}
      </td>
      <td>{tx.network}</td>
      <td title={tx.hash}>
        <code>{short(tx.hash)}</code>
      </td>
      <td title={tx.from}>
        <code>{short(tx.from)}</code>
      </td>
      <td class="n">{num(tx.nonce)}</td>
      <td class="n">{num(tx.block_number)}</td>
      <td>
        <details>
          <summary aria-label={`History of ${tx.hash}`}>{tx.history.length} states</summary>
          <ol class="history">
            {tx.history.map((entry) => (
              <li key={`${entry.status}@${entry.at}`}>
                <time dateTime={entry.at}>{time(entry.at)}</time> {entry.status}
                {entry.block_number !== undefined ? ` in block ${num(entry.block_number)}` : ''}
              </li>
            ))}
          </ol>
          <p class="meta">
            <code>{tx.hash}</code>
          </p>
        </details>
      </td>
    </tr>
  );
}
