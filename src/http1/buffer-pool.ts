/**
 * Recycled 64 KiB read buffers for large answers. Once a client answer is large (`bulky`,
 * client/client-exchange.ts), its socket reads into buffers from here; the bytes travel as views of
 * them to a server socket (server/stream-pump.ts), which gives each one back once it was written. So a
 * large answer passing through allocates no memory per read and leaves none for the garbage
 * collector: memory stays flat however many answers stream, instead of growing by tens of MiB between
 * collections.
 *
 * A pool is injected, never reached as a module global: the client (`EndpointPoolOptions.buffers`) takes
 * from it and the server (`Http1ServerOptions.buffers`) releases into it, so a program that passes answers
 * from one to the other gives both the same pool (gateway/gateway.ts makes one). A view released into
 * another pool than the one it came from is ignored there (a WeakMap miss): a mismatch costs recycling,
 * never correctness.
 *
 * Ownership is counted per buffer, by the views that hold it. `take` hands out a buffer whose one hold
 * is the returned view (the reader's, for the read in progress). Whoever keeps a view past that read
 * calls `hold(view)` first; whoever is done with a held view calls `release(view)`. A buffer returns
 * to the free list only when its last hold is released, so bytes still in use are never overwritten.
 *   - A held view that is never released (a reader collecting a stream, a stream destroyed midway, a
 *     view copied into a whole body) leaves its buffer to the garbage collector: forgetting a release
 *     costs memory, never correctness.
 *   - `hold` and `release` of anything else (ordinary Buffers, views of Node's shared pool, views made
 *     from a held one) do nothing; a view is held at most once and released at most once.
 * At most MAX_FREE buffers (4 MiB) wait in the free list; beyond that, released ones are let go.
 */

/** Bytes per buffer: the size Node itself reads into. */
export const READ_BYTES = 64 * 1024;

/** Free buffers kept for reuse, at most. */
const MAX_FREE = 64;

export class BufferPool {
  /**
   * Where client sockets read while their answer is small (client/client-connection.ts): bytes nobody
   * keeps past the read. One per pool is enough, because each read is parsed synchronously before the
   * next one lands (the process is single-threaded, and Node calls `onread` from the event loop, never
   * from inside another read's processing); whatever is kept of it is copied first (the response parser
   * copies a split head, the exchange the body bytes it keeps).
   */
  readonly scratch: Buffer = Buffer.allocUnsafe(READ_BYTES);
  readonly #free: ArrayBuffer[] = [];
  /** Holds per buffer handed out (and not yet back in the free list). */
  readonly #holds = new WeakMap<ArrayBuffer, number>();
  /** The views that carry a hold. */
  readonly #held = new WeakSet<Buffer>();
  #created = 0;
  #reused = 0;

  /** A buffer of READ_BYTES to read into; the returned view holds it until released. */
  take(): Buffer {
    let memory = this.#free.pop();
    if (memory === undefined) {
      memory = new ArrayBuffer(READ_BYTES);
      this.#created += 1;
    } else {
      this.#reused += 1;
    }
    const view = Buffer.from(memory);
    this.#holds.set(memory, 1);
    this.#held.add(view);
    return view;
  }

  /** A held view of a recycled buffer holding a copy of `bytes` (at most READ_BYTES). */
  copyOf(bytes: Buffer): Buffer {
    const buffer = this.take();
    const view = buffer.subarray(0, bytes.copy(buffer));
    this.hold(view);
    this.release(buffer);
    return view;
  }

  /** `view` (of a buffer from `take`) is kept past the current read: its buffer stays in use until released. */
  hold(view: Buffer): void {
    const holds = this.#holds.get(view.buffer as ArrayBuffer);
    if (holds === undefined || this.#held.has(view)) return;
    this.#holds.set(view.buffer as ArrayBuffer, holds + 1);
    this.#held.add(view);
  }

  /** The holder of `view` is done with its bytes; the last release frees the buffer for reuse. */
  release(view: Buffer): void {
    if (!this.#held.delete(view)) return;
    const memory = view.buffer as ArrayBuffer;
    const holds = (this.#holds.get(memory) ?? 1) - 1;
    if (holds > 0) {
      this.#holds.set(memory, holds);
      return;
    }
    this.#holds.delete(memory);
    if (this.#free.length < MAX_FREE) this.#free.push(memory);
  }

  /** Buffers allocated, and buffers handed out again from the free list, since start. */
  get stats(): { created: number; reused: number; free: number } {
    return { created: this.#created, reused: this.#reused, free: this.#free.length };
  }
}
