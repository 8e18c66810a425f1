/**
 * The store side of the gateway's readiness (`GET /readyz`, SPEC §11): whether the store answers. A
 * port in model/ so the gateway never imports store/: the serving process implements it with a query
 * (store/probe.ts); a worker process can answer from the control process's view instead.
 */
export interface StoreReadiness {
  /** The store answered a query lately (implementations bound the wait and may reuse a recent answer). */
  storeReady(): boolean | Promise<boolean>;
}
