/**
 * The pool as the API shows it: the Cloudflare fields, masked addresses (model/origin-address.ts) and
 * credential headers (model/header-secrets.ts), the configured networks that route to it and live
 * health. One definition, two forms:
 *   - `poolView`, an object, for the answers about one pool;
 *   - `PoolJsonCache.list`, the JSON of a page of pools as UTF-8 chunks, byte for byte `JSON.stringify` of
 *     their `poolView`s in the same order (pool-view.test.ts holds the two together).
 * The list is built from text pieces cached per Pool object (a WeakMap, so they go with the object):
 * everything but `healthy` (pool and each origin) and `networks` is fixed for one Pool object, and the
 * pools list reuses the Pool of an unchanged row (pools/pool-rows.ts DecodedPoolMemo), so a page of 1000
 * unchanged pools is decoded, masked and serialised once, not once per request. Health and networks are
 * read on every request.
 */
import { maskHeaders } from '../../model/header-secrets.js';
import { maskAddress } from '../../model/origin-address.js';
import type { Origin, Pool } from '../../model/pool.js';
import type { PoolHealthSource } from '../health-source.js';

/** The fields before `origins`, in wire order. */
function headFields(pool: Pool): Record<string, unknown> {
  return {
    id: pool.id,
    created_on: pool.created_on,
    modified_on: pool.modified_on,
    name: pool.name,
    description: pool.description,
    enabled: pool.enabled,
    ...(pool.disabled_at === undefined ? {} : { disabled_at: pool.disabled_at }),
    minimum_origins: pool.minimum_origins,
    ...(pool.monitor === null ? {} : { monitor: pool.monitor }),
    notification_email: pool.notification_email,
    notification_filter: pool.notification_filter,
  };
}

/** An origin's fields before its live `healthy`, in wire order. */
function originFields(origin: Origin): Record<string, unknown> {
  return {
    name: origin.name,
    address: maskAddress(origin.address),
    enabled: origin.enabled,
    weight: origin.weight,
    header: maskHeaders(origin.header),
    archive: origin.archive === true,
    ...(origin.ws_address === undefined ? {} : { ws_address: maskAddress(origin.ws_address) }),
    ...(origin.max_requests_per_second === undefined
      ? {}
      : { max_requests_per_second: origin.max_requests_per_second }),
    ...(origin.disabled_at === undefined ? {} : { disabled_at: origin.disabled_at }),
  };
}

/** The fields between `origins` and `networks`, in wire order. */
function tailFields(pool: Pool): Record<string, unknown> {
  return {
    origin_steering: pool.origin_steering,
    check_regions: pool.check_regions,
    ...(pool.latitude === undefined ? {} : { latitude: pool.latitude, longitude: pool.longitude }),
    ...(pool.load_shedding === undefined ? {} : { load_shedding: pool.load_shedding }),
  };
}

/** The pool as the API shows it (see header). */
export function poolView(pool: Pool, health: PoolHealthSource, networks: readonly string[]): Record<string, unknown> {
  return {
    ...headFields(pool),
    origins: pool.origins.map((origin) => ({ ...originFields(origin), healthy: health.originHealthy(pool, origin) })),
    ...tailFields(pool),
    networks: [...networks],
    healthy: health.poolHealthy(pool),
  };
}

/**
 * A pool's view as text with the live values left out: `head` ends with `"origins":[`, each of `origins`
 * with `"healthy":`, and `tail` with `"networks":`. Each object written by JSON.stringify always has a
 * first member (`id`, `name`, `origin_steering`), so cutting its braces leaves valid member lists.
 * `last` is the whole view as last written (UTF-8), with the live values it was written with.
 */
interface Pieces {
  head: string;
  origins: string[];
  tail: string;
  last?: { originsHealthy: boolean[]; healthy: boolean; networks: string; bytes: Buffer };
}

function piecesOf(pool: Pool): Pieces {
  const head = JSON.stringify(headFields(pool));
  const tail = JSON.stringify(tailFields(pool));
  return {
    head: `${head.slice(0, -1)},"origins":[`,
    origins: pool.origins.map((origin) => `${JSON.stringify(originFields(origin)).slice(0, -1)},"healthy":`),
    tail: `],${tail.slice(1, -1)},"networks":`,
  };
}

function sameFlags(a: readonly boolean[], b: readonly boolean[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/** The JSON text of pool views, from pieces cached per Pool object (see header). */
export class PoolJsonCache {
  readonly #pieces = new WeakMap<Pool, Pieces>();

  /**
   * `JSON.stringify(pools.map((pool) => poolView(pool, health, networksOf(pool))))` as UTF-8 chunks (for
   * api/envelope.ts JsonText), from cached pieces.
   */
  list(pools: readonly Pool[], health: PoolHealthSource, networksOf: (pool: Pool) => readonly string[]): Buffer[] {
    const chunks: Buffer[] = [OPEN];
    for (const [i, pool] of pools.entries()) {
      if (i > 0) chunks.push(COMMA);
      chunks.push(this.#bytes(pool, health, JSON.stringify(networksOf(pool))));
    }
    chunks.push(CLOSE);
    return chunks;
  }

  /** One pool's view: the last one written while health and networks are as they were then. */
  #bytes(pool: Pool, health: PoolHealthSource, networks: string): Buffer {
    let pieces = this.#pieces.get(pool);
    if (pieces === undefined) {
      pieces = piecesOf(pool);
      this.#pieces.set(pool, pieces);
    }
    const originsHealthy = pool.origins.map((origin) => health.originHealthy(pool, origin));
    const healthy = health.poolHealthy(pool);
    const last = pieces.last;
    if (
      last !== undefined &&
      last.healthy === healthy &&
      last.networks === networks &&
      sameFlags(last.originsHealthy, originsHealthy)
    ) {
      return last.bytes;
    }
    const parts = [pieces.head];
    for (const [i, origin] of pieces.origins.entries()) {
      parts.push(i > 0 ? ',' : '', origin, originsHealthy[i] === true ? 'true}' : 'false}');
    }
    parts.push(pieces.tail, networks, ',"healthy":', healthy ? 'true}' : 'false}');
    const bytes = Buffer.from(parts.join(''), 'utf8');
    pieces.last = { originsHealthy, healthy, networks, bytes };
    return bytes;
  }
}
