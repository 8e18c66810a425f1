/**
 * A client that keeps calling while something changes underneath (e.g. a config reload): `lanes` calls
 * back to back until `stop()`, half of them on keep-alive connections and half on connections of their
 * own. Every answer that is not a 200 with a JSON-RPC `result` is a failure, kept with what came back.
 * The default method, eth_blockNumber, is never answered from the response cache: each call reaches an origin.
 * `calls` counts the answers so far, so a test can wait until the loop is under way. The loop is bounded:
 * it stops by itself after `maxMs` (60 s; a test that failed before calling `stop()` still ends).
 */
import { Agent, request } from 'undici';
import { freshCall } from './http.js';

export interface ClientLoop {
  readonly calls: number;
  /** Stops the lanes (each ends its call in flight) and gives what they saw (again when called again). */
  stop(): Promise<{ calls: number; failures: string[] }>;
}

export function startClientLoop(url: string, method = 'eth_blockNumber', lanes = 4, maxMs = 60_000): ClientLoop {
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  const failures: string[] = [];
  let calls = 0;
  let running = true;
  let stopped: Promise<{ calls: number; failures: string[] }> | undefined;
  const bound = setTimeout(() => {
    running = false;
  }, maxMs);
  bound.unref();
  const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: [] });
  const keepAlive = async (): Promise<string | undefined> => {
    const res = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json' },
      body,
    });
    const text = await res.body.text();
    return res.statusCode === 200 && 'result' in JSON.parse(text) ? undefined : `${res.statusCode} ${text}`;
  };
  const fresh = async (): Promise<string | undefined> => {
    const answer = await freshCall(url, method);
    return answer.status === 200 && 'result' in answer.body
      ? undefined
      : `${answer.status} ${JSON.stringify(answer.body)}`;
  };
  const lane = async (call: () => Promise<string | undefined>): Promise<void> => {
    while (running) {
      try {
        const failure = await call();
        if (failure !== undefined) failures.push(failure);
      } catch (err) {
        failures.push(String(err));
      }
      calls += 1;
    }
  };
  const done = Promise.all(Array.from({ length: lanes }, (_, i) => lane(i % 2 === 0 ? keepAlive : fresh)));
  return {
    get calls() {
      return calls;
    },
    stop() {
      running = false;
      clearTimeout(bound);
      stopped ??= done.then(() => agent.close()).then(() => ({ calls, failures }));
      return stopped;
    },
  };
}

/** Resolves once `loop` has made `more` further calls (bounded by `timeoutMs`). */
export async function moreCalls(loop: ClientLoop, more: number, timeoutMs = 10_000): Promise<void> {
  const target = loop.calls + more;
  const deadline = Date.now() + timeoutMs;
  while (loop.calls < target) {
    if (Date.now() > deadline) throw new Error(`the client loop made no ${more} calls within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Runs `during` while a client loop calls `url`: 20 answers before it starts and 20 after it ends. The
 * loop is stopped whatever happens (a failing `during` does not leave it running); its failures and
 * what `during` returned.
 */
export async function callsThroughout<T>(
  url: string,
  during: () => Promise<T>,
): Promise<{ result: T; failures: string[] }> {
  const loop = startClientLoop(url);
  try {
    await moreCalls(loop, 20);
    const result = await during();
    await moreCalls(loop, 20);
    return { result, failures: (await loop.stop()).failures };
  } finally {
    await loop.stop();
  }
}
