/**
 * Requests in flight per origin, kept by the forwarder and read by `least_outstanding_requests` steering.
 * Keys are pool id + origin name, so the same node in two pools is counted per pool.
 */
export class OutstandingRequests {
  /** pool id → origin name → requests in flight (entries leave at 0: bounded by the origins in use) */
  readonly #counts = new Map<string, Map<string, number>>();

  get(poolId: string, originName: string): number {
    return this.#counts.get(poolId)?.get(originName) ?? 0;
  }

  /** Counts one request as started; call the returned function exactly once when it ends. */
  start(poolId: string, originName: string): () => void {
    let origins = this.#counts.get(poolId);
    if (origins === undefined) {
      origins = new Map();
      this.#counts.set(poolId, origins);
    }
    origins.set(originName, (origins.get(originName) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const counts = this.#counts.get(poolId);
      const left = (counts?.get(originName) ?? 1) - 1;
      if (counts === undefined) return;
      if (left > 0) counts.set(originName, left);
      else {
        counts.delete(originName);
        if (counts.size === 0) this.#counts.delete(poolId);
      }
    };
  }
}
