/**
 * Raw-socket HTTP/1.1 for listener tests: `RawClient` writes exact bytes (whole or in pieces) and
 * collects what comes back; `parseResponses` splits the bytes into responses (content-length,
 * chunked, or up to the close), so a test can assert statuses, headers and order byte for byte.
 * `waitFor` polls a condition with a bound (no sleeps as synchronisation).
 */
import net from 'node:net';
import tls from 'node:tls';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export class RawClient {
  readonly socket: net.Socket;
  data = '';
  closed = false;
  readonly #connected: Promise<void>;

  constructor(port: number, options: { tls?: { ca: Buffer } } = {}) {
    this.socket = options.tls
      ? tls.connect({ port, host: '127.0.0.1', ca: options.tls.ca, ALPNProtocols: ['http/1.1'] })
      : net.connect(port, '127.0.0.1');
    this.socket.setNoDelay(true);
    this.#connected = new Promise((resolve, reject) => {
      this.socket.once(options.tls ? 'secureConnect' : 'connect', () => resolve());
      this.socket.once('error', reject);
    });
    this.socket.on('data', (chunk: Buffer) => {
      this.data += chunk.toString('latin1');
    });
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => {
      this.closed = true;
    });
  }

  connected(): Promise<void> {
    return this.#connected;
  }

  async send(text: string | Buffer): Promise<void> {
    await this.#connected;
    await new Promise<void>((resolve, reject) =>
      this.socket.write(typeof text === 'string' ? Buffer.from(text, 'latin1') : text, (err) =>
        err ? reject(err) : resolve(),
      ),
    );
  }

  /** Waits until `count` whole responses arrived (or the socket closed) and returns them. */
  async responses(count: number, timeoutMs = 5_000): Promise<RawResponse[]> {
    await waitFor(() => this.closed || parseResponses(this.data).responses.length >= count, timeoutMs);
    return parseResponses(this.data, this.closed).responses;
  }

  async waitClosed(timeoutMs = 5_000): Promise<void> {
    await waitFor(() => this.closed, timeoutMs, 'the server to close the connection');
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Polls `check` every 5 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(check: () => boolean, timeoutMs = 5_000, what = 'a condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Splits raw response bytes into responses; `rest` is what is left (an incomplete response). */
export function parseResponses(data: string, closed = false): { responses: RawResponse[]; rest: string } {
  const responses: RawResponse[] = [];
  let at = 0;
  for (;;) {
    const headEnd = data.indexOf('\r\n\r\n', at);
    if (headEnd === -1) break;
    const lines = data.slice(at, headEnd).split('\r\n');
    const status = Number((lines[0] ?? '').split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    let pos = headEnd + 4;
    if (status === 100) {
      responses.push({ status, headers, body: '' });
      at = pos;
      continue;
    }
    let body = '';
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (data.length - pos < length) break;
      body = data.slice(pos, pos + length);
      pos += length;
    } else if (headers['transfer-encoding'] === 'chunked') {
      let complete = false;
      for (;;) {
        const lineEnd = data.indexOf('\r\n', pos);
        if (lineEnd === -1) break;
        const size = Number.parseInt(data.slice(pos, lineEnd), 16);
        if (data.length < lineEnd + 2 + size + 2) break;
        body += data.slice(lineEnd + 2, lineEnd + 2 + size);
        pos = lineEnd + 2 + size + 2;
        if (size === 0) {
          complete = true;
          break;
        }
      }
      if (!complete) break;
    } else if (status !== 204 && status !== 304) {
      if (!closed) break;
      body = data.slice(pos);
      pos = data.length;
    }
    responses.push({ status, headers, body });
    at = pos;
  }
  return { responses, rest: data.slice(at) };
}
