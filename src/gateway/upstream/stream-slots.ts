/**
 * Per-client stream slots: at most `gateway.max_streams_per_client` (4) large answers stream to one
 * client at once (origin-forwarder.ts; a client is its gateway API key, else its remote address, as for the
 * rate limit). A slot is taken when an answer turns out large enough to stream and given back when
 * the stream ends (finished, failed or cut).
 *
 * An answer that finds every slot of its client taken waits for one, first come first served, with its
 * origin connection paused (the exchange holds at most STREAM_HIGH_WATER bytes); origin-forwarder.ts bounds the
 * wait by the attempt's `request_timeout` deadline and then answers GATEWAY_BUSY. Answering it whole
 * instead would hold the entire answer in memory, with no bound on its size or on how many a client
 * asks for. So that waiting cannot pin origin connections either, at most as many answers wait per
 * client as may stream (`max`): one more is refused at once (`queue` gives undefined; GATEWAY_BUSY and
 * its origin connection is closed). Per client, at most 2 × max origin connections are held by
 * streams, each until its stream ends, is cut as stalled (http1/server/server-connection.ts) or stops waiting.
 *
 * A config reload changes `max` (`resize`): more slots go to waiting answers at once; with fewer, the
 * streams under way finish and a client's slots are handed on only once it is below the new `max`.
 * Memory: an entry per client with a stream or a waiter, deleted when it has neither.
 * `waitForSlot` is an attempt's wait (origin-forwarder.ts), with the attempt-failure kinds it ends in.
 */
import { finished, type Readable } from 'node:stream';
import { AttemptFailure, classify, timedOut } from './attempt-failure.js';

/** A place in a client's queue for a stream slot. */
export interface SlotWait {
  /** Resolves once the slot is this waiter's (give it back with `release`); rejects on `cancel`. */
  readonly granted: Promise<void>;
  /** Stops waiting (rejecting `granted` with `reason`); no effect once granted (the slot is the waiter's). */
  cancel(reason: Error): void;
}

interface Waiter {
  grant(): void;
  reject(reason: Error): void;
  settled: boolean;
}

interface ClientStreams {
  active: number;
  readonly waiting: Waiter[];
}

export class StreamSlots {
  #max: number;
  readonly #clients = new Map<string, ClientStreams>();

  constructor(max: number) {
    this.#max = max;
  }

  get max(): number {
    return this.#max;
  }

  /** A reloaded `max_streams_per_client` (see the header). */
  resize(max: number): void {
    this.#max = max;
    for (const entry of this.#clients.values()) {
      while (entry.active < max && entry.waiting.length > 0) {
        entry.active += 1;
        this.#grant(entry.waiting.shift() as Waiter);
      }
    }
  }

  /** Streams in progress for `client` (tests and metrics). */
  active(client: string): number {
    return this.#clients.get(client)?.active ?? 0;
  }

  /** Takes a slot of `client` if one is free. */
  take(client: string): boolean {
    let entry = this.#clients.get(client);
    if (entry === undefined) {
      entry = { active: 0, waiting: [] };
      this.#clients.set(client, entry);
    }
    if (entry.active >= this.#max) return false;
    entry.active += 1;
    return true;
  }

  /** A place in `client`'s queue, or undefined when `max` answers of that client already wait. */
  queue(client: string): SlotWait | undefined {
    const entry = this.#clients.get(client);
    if (entry === undefined) return undefined; // only after a failed take(), which made the entry
    if (entry.waiting.length >= this.#max) return undefined;
    let waiter!: Waiter;
    const granted = new Promise<void>((resolve, reject) => {
      waiter = { grant: resolve, reject, settled: false };
    });
    entry.waiting.push(waiter);
    return {
      granted,
      cancel: (reason) => {
        if (waiter.settled) return;
        waiter.settled = true;
        const at = entry.waiting.indexOf(waiter);
        if (at >= 0) entry.waiting.splice(at, 1);
        this.#forget(client, entry);
        waiter.reject(reason);
      },
    };
  }

  /** Gives a slot back: to the client's oldest waiter, if any (and the client is within `max`). */
  release(client: string): void {
    const entry = this.#clients.get(client);
    if (entry === undefined) return;
    const next = entry.active <= this.#max ? entry.waiting.shift() : undefined;
    if (next !== undefined) {
      this.#grant(next);
      return;
    }
    entry.active -= 1;
    this.#forget(client, entry);
  }

  #grant(waiter: Waiter): void {
    waiter.settled = true;
    waiter.grant();
  }

  #forget(client: string, entry: ClientStreams): void {
    if (entry.active <= 0 && entry.waiting.length === 0) this.#clients.delete(client);
  }
}

/**
 * Waits for one of `client`'s stream slots while `rest` holds the answer, paused. `onStop` gets how to
 * stop the wait (the client leaving). Throws `busy` when the client already has as many answers
 * waiting, or the attempt's deadline passed (it errors `rest`); the kind of the origin's error when
 * `rest` failed meanwhile. On a throw `rest` is destroyed (its origin connection is closed: mid-answer).
 */
export async function waitForSlot(
  slots: StreamSlots,
  client: string,
  rest: Readable,
  requestTimeoutMs: number,
  onStop: (cancel: (reason: Error) => void) => void,
): Promise<void> {
  const wait = slots.queue(client);
  if (wait === undefined) {
    rest.destroy();
    throw new AttemptFailure(
      'busy',
      `this client already has ${slots.max} large answers streaming and ${slots.max} waiting (gateway.max_streams_per_client)`,
    );
  }
  onStop((reason) => wait.cancel(reason));
  // The origin failing, or the attempt's deadline passing (it errors `rest`: http1/client/client-exchange.ts),
  // ends the wait (and `finished` keeps an 'error' from going unheard).
  const unwatch = finished(rest, (err) => wait.cancel(err ?? new Error('the answer ended while waiting')));
  try {
    await wait.granted;
  } catch (err) {
    rest.destroy();
    if (timedOut(err)) {
      throw new AttemptFailure(
        'busy',
        `no stream slot of this client came free within ${requestTimeoutMs} ms (gateway.max_streams_per_client: ${slots.max})`,
        { cause: err },
      );
    }
    throw classify(err, requestTimeoutMs);
  } finally {
    unwatch();
  }
}
