/**
 * Parts for the "no client starves the gateway" scenarios: a real node:http origin that answers
 * eth_getLogs with a 32 MiB body (larger than the kernel's socket buffers on both sides, so a client
 * that stops reading stalls the gateway's writes) and everything else with a tiny result, counting its
 * large answers in flight (their connection still open); raw client sockets that send one call and stop
 * reading after the first bytes of the answer; log capture; and a /metrics reader.
 */
import type http from 'node:http';
import net from 'node:net';
import { createLogger, type Logger } from '../../src/log.js';
import { startHttpServer, type TestServer } from '../helpers/http.js';

const BIG = Buffer.alloc(32 * 1_048_576, 0x61);
/** Bytes of the large answer for a given id text. */
export const bigAnswerLength = (id: string): number =>
  `{"jsonrpc":"2.0","id":${id},"result":"0x`.length + BIG.length + '"}'.length;

export interface BigOrigin {
  readonly url: string;
  readonly server: TestServer;
  /** Large answers being written now. */
  readonly inFlight: number;
  close(): Promise<void>;
}

export async function startBigOrigin(): Promise<BigOrigin> {
  const state = { inFlight: 0 };
  const server = await startHttpServer((_req, res: http.ServerResponse, body) => {
    const id = /"id"\s*:\s*(-?\d+)/.exec(body)?.[1] ?? 'null';
    if (!body.includes('"eth_getLogs"')) {
      const small = `{"jsonrpc":"2.0","id":${id},"result":"0x10"}`;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(small) });
      res.end(small);
      return;
    }
    state.inFlight += 1;
    res.on('close', () => {
      state.inFlight -= 1;
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': bigAnswerLength(id) });
    res.write(`{"jsonrpc":"2.0","id":${id},"result":"0x`);
    res.write(BIG);
    res.end('"}');
  });
  return {
    url: server.url,
    server,
    get inFlight() {
      return state.inFlight;
    },
    close: () => server.close(),
  };
}

export const LOGS_CALL = '{"jsonrpc":"2.0","id":7,"method":"eth_getLogs","params":[{"fromBlock":"0x1"}]}';
export const SMALL_CALL = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}';

/** A raw client socket that sent one call and stops reading after the first bytes of its answer. */
export interface StalledClient {
  readonly socket: net.Socket;
  /** The answer's HTTP status, once its first bytes came. */
  status: number | undefined;
  /** The first bytes of the answer (latin1). */
  first: string;
  closed: boolean;
}

export function stalledCall(rpcUrl: string, body: string): StalledClient {
  const url = new URL(rpcUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  const client: StalledClient = { socket, status: undefined, first: '', closed: false };
  socket.on('error', () => undefined);
  socket.on('close', () => {
    client.closed = true;
  });
  socket.once('data', (chunk: Buffer) => {
    client.first = chunk.toString('latin1');
    client.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(client.first)?.[1] ?? 0);
    socket.pause(); // stop reading: the kernel buffers fill and the gateway's writes stall
  });
  socket.write(
    `POST ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return client;
}

/**
 * A raw connection that sends nothing, from `localAddress` when given (another loopback address is
 * another peer); `closed` turns true when the gateway closes it.
 */
export function idleConnection(
  baseUrl: string,
  localAddress?: string,
): { socket: net.Socket; connected: boolean; closed: boolean } {
  const url = new URL(baseUrl);
  const socket = net.connect({ port: Number(url.port), host: url.hostname, localAddress });
  const state = { socket, connected: false, closed: false };
  socket.on('connect', () => {
    state.connected = true;
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    state.closed = true;
  });
  return state;
}

/** One call on an already open raw connection; resolves with the answer's status (answers are small). */
export function callOn(socket: net.Socket, rpcUrl: string, body: string): Promise<number> {
  const url = new URL(rpcUrl);
  return new Promise((resolve, reject) => {
    if (socket.destroyed) {
      reject(new Error('the connection closed before the answer'));
      return;
    }
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      if (head < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(text.slice(0, head))?.[1] ?? 0);
      if (text.length - head - 4 < length) return;
      socket.off('data', onData);
      socket.off('close', onClose);
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0));
    };
    const onClose = (): void => reject(new Error('the connection closed before the answer'));
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.write(
      `POST ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
}

/** A logger that keeps every record (debug and up). */
export function capturingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    level: 'debug',
    write: (line) => {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  return { logger, lines };
}

/** The value of one series of the API's /metrics (0 when absent). */
export async function metric(apiUrl: string, series: string): Promise<number> {
  const res = await fetch(`${new URL(apiUrl).origin}/metrics`);
  const text = await res.text();
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return 0;
}
