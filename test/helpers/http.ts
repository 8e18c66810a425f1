/**
 * Plain HTTP for tests: `post` sends exact bytes and returns exact bytes (ids are compared as bytes),
 * `rpc` is a one-line JSON-RPC call, `freshCall` one on a connection of its own, `relay` answers as a node would, and `startHttpServer` runs a real node:http server on a free port
 * (for origins that misbehave on purpose: 5xx, garbled bodies, hangs).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  text: string;
  json<T = unknown>(): T;
}

export async function send(
  url: string,
  options: { method?: string; body?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<HttpResult> {
  const res = await request(url, {
    method: (options.method ?? 'POST') as 'POST',
    headers: options.headers ?? {},
    body: options.body ?? null,
  });
  const text = await res.body.text();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { status: res.statusCode, headers, text, json: <T>() => JSON.parse(text) as T };
}

export function post(url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<HttpResult> {
  return send(url, { body, headers: { 'content-type': 'application/json', ...headers } });
}

export interface RpcAnswer {
  jsonrpc: string;
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export async function rpc(url: string, method: string, params: unknown[] = [], id: number | string = 1) {
  const res = await post(url, JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  return { ...res, answer: res.json<RpcAnswer>() };
}

/** What a freshCall answer holds, as far as tests read it (a JSON-RPC answer). */
export interface FreshAnswer {
  id?: unknown;
  result?: unknown;
  error?: unknown;
}

/**
 * One JSON-RPC call on a connection of its own (`Connection: close`, no agent), so node:cluster hands
 * each to the next worker; the answer's status and parsed body.
 */
export function freshCall(
  url: string,
  method: string,
  params: unknown[] = [],
  key?: string,
): Promise<{ status: number; body: FreshAnswer }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', connection: 'close' };
    if (key !== undefined) headers.authorization = `Bearer ${key}`;
    const req = http.request(url, { method: 'POST', agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as FreshAnswer }));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
  });
}

/** Answers a test origin's request with what the node at `url` answers to `body` (status and body). */
export async function relay(res: http.ServerResponse, url: string, body: string): Promise<void> {
  const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  res.writeHead(answer.status, { 'content-type': 'application/json' });
  res.end(await answer.text());
}

/**
 * The gateway's chain tracker asks every origin for its head (and now and then eth_syncing) under the
 * JSON-RPC id "switchyard-chain" (src/gateway/upstream/chain-source.ts); tests that count a client's
 * calls at an origin leave those out.
 */
export function fromChainTracker(body: string): boolean {
  return body.includes('"id":"switchyard-chain"');
}

export interface TestServer {
  readonly url: string;
  readonly port: number;
  /** Requests received so far (method + raw body), oldest first. */
  readonly received: Array<{ method: string; url: string; body: string }>;
  close(): Promise<void>;
}

export type TestHandler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void | Promise<void>;

export async function startHttpServer(handler: TestHandler): Promise<TestServer> {
  const received: TestServer['received'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      received.push({ method: req.method ?? '', url: req.url ?? '', body });
      Promise.resolve(handler(req, res, body)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
