/**
 * The one failure-feedback path: the gateway reports each attempt's outcome on an origin here, once
 * (upstream/origin-forwarder.ts). One input, two meanings:
 *   - a connection that could not be made demotes the origin for a moment (`demotion`, demotion.ts,
 *     5 s): the router (router.ts) reads it and tries the origin after every other candidate;
 *   - a connect, timeout or network failure goes to the HealthView (`reportFailure`), which ejects
 *     (passive ejection: out of routing) by its own rules (health/view.ts); an answer goes to it as a
 *     success (`reportSuccess`).
 * An HTTP status that means failure or a garbled answer says nothing about reachability: neither
 * demoted nor reported. The gateway's own capacity (GATEWAY_BUSY) is never reported at all.
 * Folding the demotion into the HealthView would change routing for pools without a monitor, so the
 * two stay separate trackers behind this one entry.
 */
import type { Clock } from '../clock.js';
import type { HealthView, LiveFailureKind } from '../model/health-view.js';
import { ConnectDemotion, DEFAULT_DEMOTION_MS } from './demotion.js';
import type { Candidate } from './router.js';

/** How an attempt on an origin failed, as far as the origin is concerned (gateway capacity excluded). */
export type OriginFailureKind = LiveFailureKind | 'status' | 'garbled';

export class OriginFeedback {
  /** Origins that could not be connected to a moment ago (read by the router). */
  readonly demotion: ConnectDemotion;
  readonly #health: HealthView;

  constructor(health: HealthView, clock: Clock, demotionMs = DEFAULT_DEMOTION_MS) {
    this.#health = health;
    this.demotion = new ConnectDemotion(clock, demotionMs);
  }

  /** An attempt on this origin failed. */
  failed(candidate: Candidate, kind: OriginFailureKind, reason: string): void {
    if (kind === 'status' || kind === 'garbled') return;
    const { pool, origin } = candidate;
    if (kind === 'connect') this.demotion.demote(pool.id, origin.name);
    this.#health.reportFailure(pool.id, origin.name, reason, kind);
  }

  /** This origin answered (on the hot path: one call, no allocation). */
  succeeded(candidate: Candidate): void {
    this.#health.reportSuccess?.(candidate.pool.id, candidate.origin.name);
  }
}
