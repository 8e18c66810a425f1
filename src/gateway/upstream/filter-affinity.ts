/**
 * Filter affinity. Filters (eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter) live in
 * the one origin that created them, so eth_getFilterChanges / eth_getFilterLogs / eth_uninstallFilter
 * must go back to it (which method does what: `filter` in the method table, rpc/methods.ts). The forwarder records which pool/origin answered a filter creation with which
 * filter id, and later calls naming that id try that origin first (then the normal plan: another origin
 * answers "filter not found", which tells the client to create a new filter).
 *
 * Entries expire after `ttlMs` without use (default 5 min, like geth's filter timeout) and at most
 * `maxEntries` (default 10 000) are kept, oldest dropped first. Reads the injected Clock. With an
 * AffinityShare (workers, instances), each creation recorded is published and every process's adopted.
 * A use refreshes the copy of the process it reaches, and is published too once that copy counts half a
 * `ttlMs` longer than what was last shared, so a filter polled through any process at least every half
 * `ttlMs` stays known to all of them (one message per filter per half `ttlMs`, not one per poll). An
 * uninstall drops only the copy of the process it reaches (another process's copy then sends a call for
 * the gone filter to its origin, which answers "filter not found").
 */
import type { Clock } from '../../clock.js';
import { scanJson } from '../rpc/json-scan.js';
import { STANDARD_METHODS } from '../rpc/methods.js';
import type { RpcCall } from '../rpc/request.js';
import { AffinityMap } from './affinity-map.js';
import type { AffinityShare } from './affinity-share.js';

/** Most entries kept by default. */
export const FILTER_AFFINITY_MAX_ENTRIES = 10_000;

export interface FilterHome {
  pool: string;
  origin: string;
}

export class FilterAffinity {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  /** `shared`: the `until` last published or adopted for this filter (what the other processes hold). */
  readonly #homes: AffinityMap<FilterHome & { until: number; shared: number }>;
  readonly #share: AffinityShare | undefined;

  constructor(clock: Clock, options: { ttlMs?: number; maxEntries?: number; share?: AffinityShare | undefined } = {}) {
    this.#clock = clock;
    this.#ttlMs = options.ttlMs ?? 300_000;
    this.#homes = new AffinityMap(options.maxEntries ?? FILTER_AFFINITY_MAX_ENTRIES);
    this.#share = options.share;
    this.#share?.subscribe((entry) => {
      if (entry.kind === 'filter') {
        const { pool, origin, until } = entry;
        this.#homes.adopt(`${entry.network}\u0000${entry.id}`, { pool, origin, until, shared: until });
      }
    });
  }

  /** Where a filter-using call should go first, if its filter id is known. */
  homeOf(network: string, call: RpcCall): FilterHome | undefined {
    const role = STANDARD_METHODS[call.method]?.filter;
    if (role === undefined || role === 'create') return undefined;
    if (!Array.isArray(call.params) || typeof call.params[0] !== 'string') return undefined;
    const id = call.params[0].toLowerCase();
    const key = `${network}\u0000${id}`;
    const now = this.#clock.now();
    const home = this.#homes.live(key, now);
    if (home === undefined) return undefined;
    if (role === 'uninstall') {
      this.#homes.delete(key);
      return { pool: home.pool, origin: home.origin };
    }
    const until = now + this.#ttlMs;
    const share = this.#share !== undefined && until - home.shared >= this.#ttlMs / 2;
    this.#homes.set(key, { pool: home.pool, origin: home.origin, until, shared: share ? until : home.shared });
    if (share) this.#share?.publish({ kind: 'filter', network, id, pool: home.pool, origin: home.origin, until });
    return { pool: home.pool, origin: home.origin };
  }

  /** Remembers the origin that answered a filter creation with a filter id. */
  record(network: string, call: RpcCall, body: Buffer, home: FilterHome): void {
    if (STANDARD_METHODS[call.method]?.filter !== 'create') return;
    const scanned = scanJson(body);
    const result = scanned?.members.find((member) => member.key === 'result');
    if (result === undefined || result.value.kind !== 'string') return;
    const id = (JSON.parse(body.toString('utf8', result.value.start, result.value.end)) as string).toLowerCase();
    const until = this.#clock.now() + this.#ttlMs;
    this.#homes.set(`${network}\u0000${id}`, { pool: home.pool, origin: home.origin, until, shared: until });
    this.#share?.publish({ kind: 'filter', network, id, pool: home.pool, origin: home.origin, until });
  }
}
