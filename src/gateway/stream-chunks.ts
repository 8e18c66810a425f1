/**
 * Recycled buffers for the bytes of large answers streaming from an origin to a client (stateful: one
 * free list per process). An origin socket reads into one shared buffer (origin-http/connection.ts),
 * so a streaming answer's bytes are copied out before they are queued for the client; copying them
 * into buffers that come back here once the client socket has taken them keeps a 10 MiB answer to a
 * handful of 64 KiB buffers, instead of 160 that wait for the garbage collector (which may let tens of
 * MiB pile up first).
 *
 * Rules that keep a buffer from ever holding two answers' bytes at once:
 *   - only buffers made here are taken back (`recycle` ignores any other), each at most once until it
 *     is handed out again;
 *   - the one place that gives them back is the client-side pump (wire/pump.ts), after the socket's
 *     write callback reported the bytes written; a chunk dropped anywhere else (the client left, a
 *     late id collected whole) is simply left to the garbage collector.
 */

/** Size of each buffer: one origin socket read at most. */
export const STREAM_CHUNK_BYTES = 64 * 1024;

export class StreamChunks {
  readonly #free: ArrayBuffer[] = [];
  /** Buffers made here; and of those, the ones on the free list. */
  readonly #ours = new WeakSet<ArrayBuffer>();
  readonly #isFree = new WeakSet<ArrayBuffer>();
  readonly #maxFree: number;

  /** `maxFree`: how many buffers wait on the free list at most (the rest are left to the collector). */
  constructor(maxFree = 32) {
    this.#maxFree = maxFree;
  }

  /** How many buffers wait on the free list. */
  get free(): number {
    return this.#free.length;
  }

  /** A copy of `bytes` (at most STREAM_CHUNK_BYTES) in a recyclable buffer. */
  copy(bytes: Buffer): Buffer {
    if (bytes.length > STREAM_CHUNK_BYTES) return Buffer.from(bytes);
    let memory = this.#free.pop();
    if (memory === undefined) {
      memory = new ArrayBuffer(STREAM_CHUNK_BYTES);
      this.#ours.add(memory);
    } else {
      this.#isFree.delete(memory);
    }
    const chunk = Buffer.from(memory, 0, bytes.length);
    bytes.copy(chunk);
    return chunk;
  }

  /** Takes back a chunk made by `copy` whose bytes nobody needs any more; ignores any other buffer. */
  recycle(chunk: Buffer): void {
    const memory = chunk.buffer;
    if (!(memory instanceof ArrayBuffer) || !this.#ours.has(memory) || this.#isFree.has(memory)) return;
    if (this.#free.length >= this.#maxFree) return;
    this.#isFree.add(memory);
    this.#free.push(memory);
  }
}

/** The process's pool: origin connections copy into it, the listener's pump gives back. */
export const STREAM_CHUNKS = new StreamChunks();
