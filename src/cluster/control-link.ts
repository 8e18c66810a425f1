/**
 * A gateway worker's end of the IPC channel (SPEC §11): sends WorkerMessages to the control process and
 * matches its `reply` messages to requests by id. A request not answered within its bound rejects (the
 * caller decides what that means: a block lookup fails like an unreachable origin; a lease grants none).
 * When the channel is gone (the control process died), sends are dropped and requests reject at once.
 */
import { deadlineAfter } from '../gateway/rpc/shared-status.js';
import type { ControlMessage, WorkerMessage, WorkerRequest } from './messages.js';

interface PendingRequest {
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer: { clear(): void };
}

/** Where messages go: this process's IPC channel to the control (default), or a test's. */
export interface ControlChannel {
  /** False when the channel is gone (nothing was sent). */
  send(message: WorkerMessage): boolean;
}

const processChannel: ControlChannel = {
  send: (message) => {
    if (process.send === undefined || !process.connected) return false;
    process.send(message);
    return true;
  },
};

export class ControlLink {
  readonly #pending = new Map<number, PendingRequest>();
  readonly #channel: ControlChannel;
  #next = 1;

  constructor(channel: ControlChannel = processChannel) {
    this.#channel = channel;
  }

  send(message: WorkerMessage): boolean {
    return this.#channel.send(message);
  }

  request(request: WorkerRequest, timeoutMs: number): Promise<unknown> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      if (!this.send({ t: 'request', id, request })) {
        reject(new Error('the control process is gone'));
        return;
      }
      // A reply that arrived while this worker was busy is read before the deadline strikes.
      const timer = deadlineAfter(timeoutMs, () => {
        this.#pending.delete(id);
        reject(new Error(`the control process did not answer a ${request.kind} request within ${timeoutMs} ms`));
      });
      this.#pending.set(id, { resolve, reject, timer });
    });
  }

  /** A `reply` from the control: settles its request. */
  settle(message: Extract<ControlMessage, { t: 'reply' }>): void {
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return;
    this.#pending.delete(message.id);
    pending.timer.clear();
    if (message.ok) pending.resolve(message.value);
    else pending.reject(new Error(message.error));
  }

  /** Rejects every request still waiting (the channel closed). */
  close(): void {
    for (const [id, pending] of this.#pending) {
      pending.timer.clear();
      pending.reject(new Error('the control process is gone'));
      this.#pending.delete(id);
    }
  }
}
