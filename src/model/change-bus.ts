/**
 * The ChangeBus port: change notices between processes and instances (SPEC §11, revocation), e.g.
 * topic `keys` after a gateway key changed, so subscribers re-read the store at once instead of at their
 * next poll. Implemented in limits/change-bus.ts (Redis, in-process). It sits in model/ so the key
 * directory and the API can use it without importing limits/.
 */

/** Best effort: a notice may be lost (the poll stays the fallback) or arrive twice; it carries no data. */
export interface ChangeBus {
  publish(topic: string): void;
  /** Calls `listener` on each notice of `topic` (including this process's own); returns the unsubscribe. */
  subscribe(topic: string, listener: () => void): () => void;
}
