import type { OriginHealthRow, PoolHealthRow } from './state-queries.js';

/**
 * This process's copy of the shared health state (`origin_health`, `pool_health`). Written through by
 * the local checker after each committed round, and refreshed from the store every second for pools
 * another process checks. A refresh never rolls back a newer local write: it carries the write mark taken
 * before its read, and pools written locally after that mark keep their local rows. Reads are synchronous:
 * the gateway asks on every request.
 *
 * The periodic refresh leaves out the pools whose lease this process holds (it is their only writer, so
 * its rows are the stored ones): `replace` takes them as `keep`. A round that takes a pool's lease
 * `claim`s the pool first, so a refresh that started before (and read the pool as someone else's, or
 * left out its rows) cannot blank it.
 */
export class LiveState {
  #origins = new Map<string, Map<string, OriginHealthRow>>();
  #pools = new Map<string, PoolHealthRow>();
  #writes = 0;
  #lastWrite = new Map<string, number>();

  origin(poolId: string, originName: string): OriginHealthRow | undefined {
    return this.#origins.get(poolId)?.get(originName);
  }

  origins(poolId: string): ReadonlyMap<string, OriginHealthRow> {
    return this.#origins.get(poolId) ?? new Map();
  }

  pool(poolId: string): PoolHealthRow | undefined {
    return this.#pools.get(poolId);
  }

  /** Take before reading the store for `replace`. */
  mark(): number {
    return this.#writes;
  }

  /** The committed state of one pool, as this process just wrote it. */
  writePool(poolId: string, pool: PoolHealthRow | undefined, origins: readonly OriginHealthRow[]): void {
    this.#writes += 1;
    this.#lastWrite.set(poolId, this.#writes);
    this.#origins.set(poolId, new Map(origins.map((row) => [row.origin_name, row])));
    if (pool === undefined) this.#pools.delete(poolId);
    else this.#pools.set(poolId, pool);
  }

  /** This process now holds the pool's lease: refreshes that began before leave the pool alone. */
  claim(poolId: string): void {
    this.#writes += 1;
    this.#lastWrite.set(poolId, this.#writes);
  }

  /**
   * Replaces the state of `poolIds` (or of every pool) with rows read from the store after `mark`.
   * Pools missing from the read were deleted there and are dropped here too. Pools in `keep` (this
   * process holds their lease; their rows were not read) are left as they are.
   */
  replace(
    origins: readonly OriginHealthRow[],
    pools: readonly PoolHealthRow[],
    mark: number,
    poolIds?: readonly string[],
    keep?: ReadonlySet<string>,
  ): void {
    const fresh = (poolId: string) => (this.#lastWrite.get(poolId) ?? 0) <= mark && keep?.has(poolId) !== true;
    const scope = new Set(poolIds ?? [...this.#pools.keys(), ...this.#origins.keys(), ...pools.map((p) => p.pool_id)]);
    for (const row of origins) scope.add(row.pool_id);
    const byPool = new Map<string, OriginHealthRow[]>();
    for (const row of origins) byPool.set(row.pool_id, [...(byPool.get(row.pool_id) ?? []), row]);
    const poolRows = new Map(pools.map((row) => [row.pool_id, row]));
    for (const poolId of scope) {
      if (!fresh(poolId)) continue;
      this.#origins.set(poolId, new Map((byPool.get(poolId) ?? []).map((row) => [row.origin_name, row])));
      const pool = poolRows.get(poolId);
      if (pool === undefined) this.#pools.delete(poolId);
      else this.#pools.set(poolId, pool);
    }
  }
}
