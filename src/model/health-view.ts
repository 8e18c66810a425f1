/**
 * The HealthView port: what routing and the gateway know about origin health, implemented by health/
 * (view.ts), by a gateway worker's replica (cluster/replica-health.ts) and, for routing tests,
 * test/helpers/simple-health.ts. It sits in model/ so neither routing nor the gateway imports health/.
 */

/** How a live request to an origin failed: never connected, no answer in time, or broke mid-exchange. */
export type LiveFailureKind = 'connect' | 'timeout' | 'network';

/**
 * What routing knows about health. The health module implements it; until a pool has a monitor,
 * its enabled origins count as healthy.
 */
export interface HealthView {
  originHealthy(poolId: string, originName: string): boolean;
  poolHealthy(poolId: string): boolean;
  /**
   * Live traffic saw this origin fail (connection refused, timeout): take it out of rotation quickly.
   * Without `kind` the failure counts as a refused connection (docs/health.md has the rules).
   */
  reportFailure(poolId: string, originName: string, reason: string, kind?: LiveFailureKind): void;
  /** Live traffic got an answer from this origin (on the hot path: must be cheap). */
  reportSuccess?(poolId: string, originName: string): void;
}
