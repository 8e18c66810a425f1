/**
 * A local "provider" in front of a real node (an anvil), for the routing tests (SPEC §17): a node:http
 * server on a free 127.0.0.1 port that forwards each JSON-RPC body to `target` and behaves as a paid
 * provider can, as told by `behaviour` (changeable at any time):
 *   - `latencyMs`: added before every answer (a number, or drawn per call from the seeded stream);
 *   - `stall`: a seeded `fraction` of calls waits `ms` more (0..1; 1 = every call);
 *   - `throttle`: answer HTTP 429 (with `Retry-After` when given, and an optional JSON-RPC body) without
 *     forwarding, for a seeded `fraction` of calls;
 *   - `rateLimitAnswer`: answer 200 with a provider's rate-limit error in place of the node's answer (a
 *     single call; in a batch, each element) with probability `fraction`, only for `methods` when
 *     given: the message and code given;
 *   - `refuse`: answer this JSON-RPC error to every matching call (by method and params) without forwarding.
 * Behaviours apply to the calls `applies` picks (default: every call but the chain tracker's head polls,
 * id "switchyard-chain", so the gateway keeps its view of the chain). A monitor probe looks like a
 * forwarded call (the same request, SPEC §8): a test of probes gives the monitored origin a proxy of its own.
 *
 * It counts what a test asserts on: every request (method names of a single call or a batch), sockets
 * opened, open now, and answers cut before they were written whole (`cut`: the client closed the
 * connection while the proxy still owed it an answer — a leak check counts these), answers written
 * whole (`answered`). Draws come from a mulberry32 stream (`seed`), so a run can be replayed. `close`
 * ends every connection and pending timer.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fromChainTracker } from './http.js';
import { Rng } from './seeded-rng.js';

export interface ProviderBehaviour {
  latencyMs?: number | ((rng: Rng) => number);
  stall?: { fraction: number; ms: number };
  throttle?: { fraction: number; retryAfter?: string; body?: string };
  rateLimitAnswer?: { fraction: number; code: number; message: string; data?: unknown; methods?: readonly string[] };
  /** `params`: the call's params as sent (e.g. to refuse only wide eth_getLogs ranges). */
  refuse?: { match: (method: string, params: unknown) => boolean; code: number; message: string };
  /** Which calls the behaviour applies to (default: all but chain-tracker polls). */
  applies?: (body: string) => boolean;
}

export interface ProviderRequest {
  readonly body: string;
  readonly methods: readonly string[];
  readonly batch: boolean;
  /** Which connection it came on (numbered as they were opened, from 1). */
  readonly socket: number;
  /** Its `X-Request-Id` header, if any. */
  readonly requestId: string | undefined;
  /** What the proxy did: forwarded, throttled (429), rate-limit answer, stalled then forwarded, refused. */
  outcome: 'forwarded' | 'throttled' | 'rate-limited' | 'stalled' | 'refused';
  /** Whether its answer has been written. */
  answered: boolean;
}

export interface ProviderProxy {
  readonly url: string;
  behaviour: ProviderBehaviour;
  readonly requests: ProviderRequest[];
  readonly sockets: { opened: number; open: number };
  /** Answers written whole / cut off by the client closing the connection first. */
  readonly counts: { answered: number; cut: number };
  /** Calls received so far (chain-tracker polls left out), of `method` when given. */
  calls(method?: string): number;
  reseed(seed: number): void;
  close(): Promise<void>;
}

export async function startProviderProxy(
  target: string,
  behaviour: ProviderBehaviour = {},
  seed = 1,
): Promise<ProviderProxy> {
  let rng = new Rng(seed);
  const requests: ProviderRequest[] = [];
  const sockets = { opened: 0, open: 0 };
  const counts = { answered: 0, cut: 0 };
  const timers = new Set<NodeJS.Timeout>();
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });
  const proxy: ProviderProxy = {
    url: '',
    behaviour,
    requests,
    sockets,
    counts,
    calls: (method) =>
      requests.filter((r) => !fromChainTracker(r.body) && (method === undefined || r.methods.includes(method))).length,
    reseed: (next) => {
      rng = new Rng(next);
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };

  const numbers = new WeakMap<object, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const socket = numbers.get(req.socket) ?? 0;
      res.on('close', () => {
        if (res.writableFinished) counts.answered += 1;
        else counts.cut += 1;
      });
      const id = req.headers['x-request-id'];
      void answer(body, socket, typeof id === 'string' ? id : undefined, res).catch(() => res.destroy());
    });
  });
  // Keeps idle connections as long as the gateway does (30 s), not node's 5 s: a test of connection
  // reuse sees the gateway's choices, not the server's.
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket) => {
    sockets.opened += 1;
    numbers.set(socket, sockets.opened);
    sockets.open += 1;
    socket.on('close', () => {
      sockets.open -= 1;
    });
  });

  const answer = async (
    body: string,
    socket: number,
    requestId: string | undefined,
    res: http.ServerResponse,
  ): Promise<void> => {
    const parsed = JSON.parse(body) as unknown;
    const batch = Array.isArray(parsed);
    const elements = (batch ? parsed : [parsed]) as Array<{ id?: unknown; method?: string; params?: unknown }>;
    const request: ProviderRequest = {
      body,
      methods: elements.map((e) => String(e.method)),
      batch,
      socket,
      requestId,
      outcome: 'forwarded',
      answered: false,
    };
    requests.push(request);
    const b = proxy.behaviour;
    const applies = (b.applies ?? ((text: string) => !fromChainTracker(text)))(body);
    const send = (status: number, text: string, headers: Record<string, string> = {}) => {
      request.answered = true;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(text);
    };
    if (!applies) return send(200, await forward(target, body));
    const latency = typeof b.latencyMs === 'function' ? b.latencyMs(rng) : (b.latencyMs ?? 0);
    if (b.throttle !== undefined && rng.chance(b.throttle.fraction)) {
      request.outcome = 'throttled';
      if (latency > 0) await wait(latency);
      return send(
        429,
        b.throttle.body ?? '',
        b.throttle.retryAfter === undefined ? {} : { 'retry-after': b.throttle.retryAfter },
      );
    }
    const refuse = b.refuse;
    if (refuse !== undefined && !batch && refuse.match(request.methods[0] as string, elements[0]?.params)) {
      request.outcome = 'refused';
      const id = elements[0]?.id;
      return send(200, JSON.stringify({ jsonrpc: '2.0', id, error: { code: refuse.code, message: refuse.message } }));
    }
    if (b.stall !== undefined && rng.chance(b.stall.fraction)) {
      request.outcome = 'stalled';
      await wait(b.stall.ms);
    }
    if (latency > 0) await wait(latency);
    const limited = b.rateLimitAnswer;
    if (limited === undefined) return send(200, await forward(target, body));
    return send(200, await rateLimited(target, body, batch, elements, limited, rng, request));
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (proxy as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

async function forward(target: string, body: string): Promise<string> {
  const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return res.text();
}

/** The node's answer with rate-limit errors in place of some answers (all of a single call's). */
async function rateLimited(
  target: string,
  body: string,
  batch: boolean,
  elements: Array<{ id?: unknown; method?: string }>,
  limited: NonNullable<ProviderBehaviour['rateLimitAnswer']>,
  rng: Rng,
  request: ProviderRequest,
): Promise<string> {
  const error = (id: unknown) => ({
    jsonrpc: '2.0',
    id,
    error: {
      code: limited.code,
      message: limited.message,
      ...(limited.data === undefined ? {} : { data: limited.data }),
    },
  });
  const picked = (method: string | undefined) =>
    (limited.methods === undefined || limited.methods.includes(String(method))) && rng.chance(limited.fraction);
  if (!batch) {
    if (!picked(elements[0]?.method)) return forward(target, body);
    request.outcome = 'rate-limited';
    return JSON.stringify(error(elements[0]?.id));
  }
  const answers = JSON.parse(await forward(target, body)) as Array<{ id?: unknown }>;
  let any = false;
  const methodOf = new Map(elements.map((e) => [JSON.stringify(e.id), e.method]));
  const out = answers.map((answer) => {
    if (!picked(methodOf.get(JSON.stringify(answer.id)))) return answer;
    any = true;
    return error(answer.id);
  });
  if (any) request.outcome = 'rate-limited';
  return JSON.stringify(out);
}

/** Waits (bounded) until the gateway's chain tracker knows the head of every origin of `network`. */
export async function headsKnown(
  chain: { trackedOrigins(network: string): Array<{ state: { head?: number | undefined } }> },
  network: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const origins = chain.trackedOrigins(network);
    if (origins.length > 0 && origins.every((o) => o.state.head !== undefined)) return;
    if (Date.now() > deadline) throw new Error(`the chain tracker did not learn every head of ${network}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
