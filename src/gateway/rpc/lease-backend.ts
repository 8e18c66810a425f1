/**
 * The port behind leased rate-limit budgets (SPEC §11): a limiter that answers `take`
 * synchronously from tokens it holds locally asks a backend for more ahead of need. The backend holds the
 * global bucket and never grants more than it holds, so what a bucket admits across every holder stays
 * within limit × t + burst (unused leased tokens are the only shortfall).
 *
 * Implementations: Redis (limits/redis-backend.ts, one script per lease), in-process
 * (limits/local-backend.ts), and the gateway worker's IPC backend that asks the control process
 * (src/cluster/lease-ipc.ts). The port sits beside the Limiter (rate-limit.ts) it serves.
 */
import type { RateSpec } from './rate-limit.js';

/** One bucket's request: up to `want` tokens of `bucket`, whose limit is `spec`. */
export interface LeaseAsk {
  readonly bucket: string;
  readonly spec: RateSpec;
  readonly want: number;
}

export interface LeaseBackend {
  /** Tokens granted per ask, in the order asked (each 0 ≤ granted ≤ want; whole tokens). */
  lease(asks: readonly LeaseAsk[]): Promise<number[]>;
}
