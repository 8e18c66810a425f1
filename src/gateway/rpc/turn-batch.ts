/**
 * The asks of one event-loop turn, sent to a shared backend as one batch (one round trip): the leased
 * limiter's leases (leased-limiter.ts) and the leased quota's reserves (quota-leased.ts). The first `add`
 * of a turn schedules the send (setImmediate); each ask's answer goes back to its pending record, in
 * order — `undefined` for all of them when the batch failed (or an answer is missing) (the backend is down: the caller decides
 * locally meanwhile).
 */
export class TurnBatch<Ask, Pending, Grant> {
  readonly #send: (asks: Ask[]) => Promise<readonly Grant[] | undefined>;
  readonly #answer: (pending: Pending, grant: Grant | undefined) => void;
  #asks: Ask[] = [];
  #pending: Pending[] = [];
  #scheduled = false;

  constructor(
    send: (asks: Ask[]) => Promise<readonly Grant[] | undefined>,
    answer: (pending: Pending, grant: Grant | undefined) => void,
  ) {
    this.#send = send;
    this.#answer = answer;
  }

  add(ask: Ask, pending: Pending): void {
    this.#asks.push(ask);
    this.#pending.push(pending);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => void this.#flush());
  }

  async #flush(): Promise<void> {
    this.#scheduled = false;
    const asks = this.#asks;
    const pending = this.#pending;
    this.#asks = [];
    this.#pending = [];
    const grants = await this.#send(asks);
    for (const [i, record] of pending.entries()) this.#answer(record, grants?.[i]);
  }
}
