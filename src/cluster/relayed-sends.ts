/**
 * Accepted transactions from gateway workers to the control process's ledger (SPEC §19 with
 * `gateway.workers` > 1): a worker's gateway tells a SendBatch (its AcceptedSends), which sends what it
 * holds to the control as a `accepted-sends` report every SENDS_FLUSH_MS (50 ms), at once when
 * SENDS_BATCH (200) are waiting, and when the worker stops; the control hands each to its ledger's
 * recorder. A worker that crashes loses at most its last 50 ms of sends (their records, not the sends).
 */
import type { AcceptedSend, AcceptedSends } from '../model/accepted-sends.js';

export const SENDS_TOPIC = 'accepted-sends';
export const SENDS_FLUSH_MS = 50;
const SENDS_BATCH = 200;

/** Worker side. */
export class SendBatch implements AcceptedSends {
  readonly #send: (payload: AcceptedSend[]) => void;
  #held: AcceptedSend[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(send: (payload: AcceptedSend[]) => void) {
    this.#send = send;
  }

  accepted(send: AcceptedSend): void {
    this.#held.push(send);
    if (this.#held.length >= SENDS_BATCH) this.flush();
    else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.flush(), SENDS_FLUSH_MS);
      this.#timer.unref();
    }
  }

  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#held.length === 0) return;
    const held = this.#held;
    this.#held = [];
    this.#send(held);
  }
}

/** Control side: each well-formed send of a worker's report goes to `sends`. */
export function relaySends(sends: AcceptedSends, payload: unknown): void {
  if (!Array.isArray(payload)) return;
  for (const item of payload as unknown[]) {
    const send = item as Partial<AcceptedSend> | null;
    if (
      typeof send?.network !== 'string' ||
      typeof send.raw !== 'string' ||
      typeof send.client !== 'string' ||
      typeof send.at !== 'number' ||
      !Array.isArray(send.origins) ||
      (send.keyId !== undefined && typeof send.keyId !== 'string')
    ) {
      continue;
    }
    sends.accepted(send as AcceptedSend);
  }
}
