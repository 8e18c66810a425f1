/**
 * Networks → pools → origins, refreshed every 4 s from `GET …/gateway/networks` (networks, lifecycle,
 * pools in failover order with live health) and `GET …/load_balancers/origin_stats` (per origin: health
 * and its failure reason, head, lag, earliest block, p50 latency, requests/s and error rate over the last
 * 5 minutes, summed over workers and instances). layout.ts orders it: networks in the config's order,
 * retired ones after with their successor, pools no network uses last. Past 10 pools a filter box and
 * per-network collapse appear; networks then start collapsed to a one-line summary, and a filter shows
 * every matching pool expanded.
 */
import { useState } from 'preact/hooks';
import { usePoll } from '../hooks.js';
import {
  COLLAPSE_AFTER,
  filterSections,
  layoutSections,
  type NetworkSection,
  poolCount,
  sectionSummary,
} from '../layout.js';
import type { NetworkItem, OriginRow } from '../types.js';
import type { ViewProps } from '../view.js';
import { PoolTable } from './pool-table.js';

const sectionId = (key: string) => key.replace(/[^a-z0-9-]/g, '-');

/** A network's retirement and successor; `follow` opens the successor's section (when it has one). */
function Lifecycle({ network, follow }: { network: NetworkItem; follow: (() => void) | undefined }) {
  if (network.retired_on === null) return null;
  const retired = network.status === 'retired';
  const successor = network.replacement;
  return (
    <p class="lifecycle">
      <span class={retired ? 'badge bad' : 'badge warn'}>{retired ? 'retired' : 'retiring'}</span>{' '}
      {retired
        ? `since ${network.retired_on}: the gateway answers 410.`
        : `on ${network.retired_on}: answers carry Deprecation and Sunset headers.`}{' '}
      {successor === null ? (
        'No successor is configured.'
      ) : (
        <>
          Successor:{' '}
          {follow === undefined ? (
            <strong>{successor}</strong>
          ) : (
            <a href={`#${sectionId(`network:${successor}`)}`} onClick={follow}>
              {successor}
            </a>
          )}
        </>
      )}
    </p>
  );
}

interface BlockProps extends ViewProps {
  section: NetworkSection;
  /** Of the whole section, also while a filter shows only some of its pools. */
  summary: string;
  open: boolean;
  /** Absent when collapse is not offered (10 pools or fewer) or not possible (a filter is active). */
  toggle: (() => void) | undefined;
  /** Opens the successor network's section; absent when the successor is not a configured network. */
  follow: (() => void) | undefined;
  reload: () => void;
}

function NetworkBlock({ section, summary, open, toggle, follow, ...props }: BlockProps) {
  const network = section.network;
  const title = network === null ? 'Pools no network uses' : `Network ${network.name}`;
  const body = `${sectionId(section.key)}-pools`;
  const where = network === null ? 'used by no network' : `on ${network.name}`;
  return (
    <div class="network" id={sectionId(section.key)} data-network={network?.name ?? ''}>
      <h3>
        {toggle === undefined ? (
          title
        ) : (
          <button type="button" class="toggle" aria-expanded={open} aria-controls={body} onClick={toggle}>
            <span aria-hidden="true">{open ? '▾ ' : '▸ '}</span>
            {title}
          </button>
        )}
      </h3>
      {network === null ? null : <Lifecycle network={network} follow={follow} />}
      <p class="meta summary">
        {network === null ? '' : `chain ${network.chain_id} · `}
        {summary}
      </p>
      <div id={body} hidden={!open}>
        {open ? section.pools.map((pool) => <PoolTable key={pool.key} pool={pool} where={where} {...props} />) : null}
      </div>
    </div>
  );
}

function FilterBar(props: { value: string; onInput: (v: string) => void; shown: number; total: number }) {
  return (
    <div class="filter">
      <label for="pool-filter">Filter pools</label>{' '}
      <input
        id="pool-filter"
        type="search"
        value={props.value}
        placeholder="pool, origin or network"
        onInput={(e) => props.onInput((e.target as HTMLInputElement).value)}
      />{' '}
      <span class="meta" aria-live="polite">
        {props.value.trim() === '' ? `${props.total} pools` : `${props.shown} of ${props.total} pools match`}
      </span>
    </div>
  );
}

export function OriginsView(props: ViewProps) {
  const { client, onSessionEnded } = props;
  const networks = usePoll(() => client.get<NetworkItem[]>('/accounts/{account}/gateway/networks'), onSessionEnded);
  const stats = usePoll(
    () => client.get<OriginRow[]>('/accounts/{account}/load_balancers/origin_stats?per_page=1000'),
    onSessionEnded,
  );
  const [filter, setFilter] = useState('');
  const [expanded, setExpanded] = useState<Record<string, boolean>>({});
  const all = networks.data === undefined || stats.data === undefined ? [] : layoutSections(networks.data, stats.data);
  const total = poolCount(all);
  const large = total > COLLAPSE_AFTER;
  const filtering = large && filter.trim() !== '';
  const shown = filtering ? filterSections(all, filter) : all;
  const isOpen = (key: string) => filtering || (expanded[key] ?? !large);
  const setOpen = (key: string, open: boolean) => setExpanded((before) => ({ ...before, [key]: open }));
  const known = new Set(all.map((s) => s.key));
  const summaries = new Map(all.map((s) => [s.key, sectionSummary(s)]));
  const followOf = (network: NetworkItem | null) => {
    if (network?.replacement == null) return undefined;
    const key = `network:${network.replacement}`;
    return known.has(key) ? () => setOpen(key, true) : undefined;
  };
  const reload = () => stats.reload();
  const error = networks.error ?? stats.error;
  return (
    <section aria-labelledby="origins-title">
      <h2 id="origins-title">Networks, pools and origins</h2>
      <p class="meta" aria-live="polite">
        {error !== undefined ? <span class="error">{error}</span> : null}
        {stats.updated !== undefined
          ? `Updated ${stats.updated.toLocaleTimeString('en-GB')} · refreshes every 4 s`
          : 'Loading…'}
      </p>
      {stats.data !== undefined && stats.data.length === 0 ? <p>No pools in this account yet.</p> : null}
      {large ? <FilterBar value={filter} onInput={setFilter} shown={poolCount(shown)} total={total} /> : null}
      {filtering && shown.length === 0 ? <p>No pool, origin or network matches “{filter.trim()}”.</p> : null}
      {shown.map((section) => (
        <NetworkBlock
          key={section.key}
          section={section}
          summary={summaries.get(section.key) ?? ''}
          open={isOpen(section.key)}
          toggle={large && !filtering ? () => setOpen(section.key, !isOpen(section.key)) : undefined}
          follow={followOf(section.network)}
          reload={reload}
          {...props}
        />
      ))}
    </section>
  );
}
