/**
 * Requests in flight per origin, kept by the forwarder and read by `least_outstanding_requests` steering.
 * Keys are pool id + origin name, so the same node in two pools is counted per pool.
 */
export class OutstandingRequests {
  readonly #counts = new Map<string, number>();

  get(poolId: string, originName: string): number {
    return this.#counts.get(`${poolId}\u0000${originName}`) ?? 0;
  }

  /** Counts one request as started; call the returned function exactly once when it ends. */
  start(poolId: string, originName: string): () => void {
    const k = `${poolId}\u0000${originName}`;
    this.#counts.set(k, (this.#counts.get(k) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.#counts.get(k) ?? 1) - 1;
      if (left <= 0) this.#counts.delete(k);
      else this.#counts.set(k, left);
    };
  }
}
