/**
 * A JSON-RPC origin for the bench/cache tests: a real node:http server on port 0 that answers like a
 * node (echoing each request's id), counts calls per method (the gateway chain tracker's own requests —
 * head polls, eth_syncing, finalized blocks — apart, as "chain tracker"), and can hold answers until released (to
 * line up concurrent requests without sleeping). `answers` maps a method to its result JSON text or to
 * a function of the params; unknown methods get a -32601 error.
 */
import { fromChainTracker, startHttpServer, type TestServer } from '../helpers/http.js';

export type Answer = { result: string } | { error: string } | { status: number; body: string };

export interface FakeOrigin {
  readonly url: string;
  calls(method?: string): number;
  hold(): void;
  release(): void;
  answers: Record<string, (params: unknown) => Answer>;
  close(): Promise<void>;
}

export async function startOrigin(answers: FakeOrigin['answers'] = {}): Promise<FakeOrigin> {
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  const counts = new Map<string, number>();
  const origin: FakeOrigin = {
    url: '',
    calls: (method) =>
      method === undefined ? [...counts.values()].reduce((a, b) => a + b, 0) : (counts.get(method) ?? 0),
    hold() {
      gate ??= new Promise((resolve) => {
        open = resolve;
      });
    },
    release() {
      open?.();
      gate = undefined;
    },
    answers,
    close: async () => server.close(),
  };
  const server: TestServer = await startHttpServer(async (_req, res, body) => {
    const request = JSON.parse(body) as { id?: unknown; method: string; params?: unknown };
    // The chain tracker's requests are counted apart, so they never blur a method's count.
    const counted = fromChainTracker(body) ? 'chain tracker' : request.method;
    counts.set(counted, (counts.get(counted) ?? 0) + 1);
    if (gate !== undefined) await gate;
    // Echo the id exactly as it came (the gateway sends its own small integer).
    const idText = /"id"\s*:\s*(-?\d+|"[^"]*"|null)/.exec(body)?.[1] ?? 'null';
    const make = origin.answers[request.method];
    const answer: Answer = make ? make(request.params) : { error: '{"code":-32601,"message":"method not found"}' };
    if ('status' in answer) {
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(answer.body);
      return;
    }
    const payload =
      'result' in answer
        ? `{"jsonrpc":"2.0","id":${idText},"result":${answer.result}}`
        : `{"jsonrpc":"2.0","id":${idText},"error":${answer.error}}`;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
    res.end(payload);
  });
  return Object.assign(origin, { url: server.url });
}

/** Waits, bounded, until `condition` holds. */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
