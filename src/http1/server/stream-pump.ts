/**
 * Copies a streamed answer's `rest` into the client socket with backpressure: `rest` is paused while
 * the socket's buffer is full and resumed on the connection's 'drain'. Framing: with a length, bytes
 * go as they are (and a `rest` that ends short of, or runs past, the length fails); chunked, each
 * piece is framed `size CRLF data CRLF` and the answer ends with `0 CRLF CRLF`; close-delimited,
 * bytes go as they are and the connection closes after.
 *
 * `done(true)` when the whole answer was handed to the socket; `done(false)` when `rest` failed
 * midway — the connection is then cut, so the client sees a truncated answer, never a wrong one.
 * `abort()` (the client left) destroys `rest`, which stops the origin's request.
 *
 * Pieces may be views of recycled read buffers (../buffer-pool.ts, the server's `buffers`): each is
 * released there once the socket wrote it (its write callback, called on success and on failure alike),
 * never before.
 *
 * Write progress, for the connection's stall cut (server-connection.ts, `gateway.stream_stall_timeout`):
 * `progressed()` is called when a piece was written to the socket, and when a piece is handed to a
 * socket with nothing queued (the wait for the client starts then, not at the last write).
 */
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { BufferPool } from '../buffer-pool.js';
import { CHUNKED } from './answer-head.js';

const CRLF = Buffer.from('\r\n');
const LAST_CHUNK = Buffer.from('0\r\n\r\n');

export class StreamPump {
  readonly #socket: Socket;
  readonly #rest: Readable;
  readonly #buffers: BufferPool;
  /** Expected total bytes of the body (head included), or CHUNKED / CLOSE_DELIMITED. */
  readonly #length: number;
  readonly #done: (ok: boolean) => void;
  readonly #progressed: () => void;
  #sent: number;
  #finished = false;
  readonly #onData = (piece: Buffer): void => this.#data(piece);
  readonly #onEnd = (): void => this.#end();
  readonly #onError = (): void => this.#finish(false);
  readonly #onClose = (): void => this.#finish(false);

  constructor(
    socket: Socket,
    rest: Readable,
    length: number,
    sentAlready: number,
    done: (ok: boolean) => void,
    progressed: () => void,
    buffers: BufferPool,
  ) {
    this.#socket = socket;
    this.#rest = rest;
    this.#buffers = buffers;
    this.#length = length;
    this.#sent = sentAlready;
    this.#done = done;
    this.#progressed = progressed;
    rest.on('data', this.#onData);
    rest.on('end', this.#onEnd);
    rest.on('error', this.#onError);
    // 'close' without 'end' first: the stream was destroyed midway.
    rest.on('close', this.#onClose);
    // Destroyed before we listened (the origin failed, or the client left, as the answer was handed over).
    if (rest.destroyed) queueMicrotask(this.#onClose);
  }

  /** Body bytes taken so far (the first ones, written before the pump, included). */
  get sent(): number {
    return this.#sent;
  }

  /** The socket drained: read on. */
  resume(): void {
    if (!this.#finished) this.#rest.resume();
  }

  /** The client left: stop reading the origin. */
  abort(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#detach();
    this.#rest.destroy();
  }

  #data(piece: Buffer): void {
    if (this.#finished) return;
    this.#sent += piece.length;
    if (this.#length >= 0 && this.#sent > this.#length) {
      this.#finish(false);
      return;
    }
    if (this.#socket.writableLength === 0) this.#progressed();
    const written = (): void => {
      this.#buffers.release(piece);
      this.#progressed();
    };
    let ok: boolean;
    if (this.#length === CHUNKED) {
      this.#socket.cork();
      this.#socket.write(piece.length.toString(16) + '\r\n', 'latin1');
      this.#socket.write(piece, written);
      ok = this.#socket.write(CRLF);
      this.#socket.uncork();
    } else {
      ok = this.#socket.write(piece, written);
    }
    if (!ok) this.#rest.pause();
  }

  #end(): void {
    if (this.#finished) return;
    if (this.#length >= 0 && this.#sent !== this.#length) {
      this.#finish(false);
      return;
    }
    if (this.#length === CHUNKED) this.#socket.write(LAST_CHUNK);
    this.#finish(true);
  }

  #finish(ok: boolean): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#detach();
    if (!ok) this.#rest.destroy();
    this.#done(ok);
  }

  #detach(): void {
    this.#rest.off('data', this.#onData);
    this.#rest.off('end', this.#onEnd);
    this.#rest.off('close', this.#onClose);
    // An 'error' after we let go must not crash the process.
    this.#rest.off('error', this.#onError);
    this.#rest.on('error', ignore);
  }
}

function ignore(): void {}
