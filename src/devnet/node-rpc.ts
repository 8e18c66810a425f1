/**
 * The devnet's own JSON-RPC client for its anvil nodes (replication, failover): one POST per call or per
 * batch, each bounded by a timeout (default 500 ms: a local anvil answers in about a millisecond, and a
 * stopped leader must not hold up failover for long), over up to 8 kept-alive connections per node
 * (undici Pool).
 *
 * Two kinds of failure are kept apart because the replicator treats them differently:
 * - `NodeUnreachable`: no answer (connection refused, reset, timed out) — the node may be gone or stopped;
 * - `NodeRefused`: the node answered with a JSON-RPC error (its message is anvil's own, e.g.
 *   "nonce too low") — the node is alive.
 */

import { Pool } from 'undici';

export const CALL_TIMEOUT_MS = 500;

export class NodeUnreachable extends Error {
  override readonly name = 'NodeUnreachable';
}

export class NodeRefused extends Error {
  override readonly name = 'NodeRefused';
  readonly code: number | undefined;
  constructor(method: string, error: { code?: number; message?: string }) {
    super(`${method}: ${error.message ?? 'error'}`);
    this.code = error.code;
  }
}

export type NodeAnswer = { ok: true; result: unknown } | { ok: false; error: NodeRefused };

interface JsonRpcAnswer {
  id?: unknown;
  result?: unknown;
  error?: { code?: number; message?: string };
}

export class NodeRpc {
  readonly url: string;
  /** The origin name the pool gives this node (`anvil-0`, …), for logs. */
  readonly name: string;

  readonly #pool: Pool;
  readonly #path: string;

  constructor(url: string, name: string) {
    this.url = url;
    this.name = name;
    const parsed = new URL(url);
    this.#pool = new Pool(parsed.origin, { connections: 8 });
    this.#path = parsed.pathname;
  }

  async call<T = unknown>(method: string, params: readonly unknown[] = [], timeoutMs = CALL_TIMEOUT_MS): Promise<T> {
    const answer = (await this.#post({ jsonrpc: '2.0', id: 1, method, params }, timeoutMs)) as JsonRpcAnswer;
    if (answer.error) throw new NodeRefused(method, answer.error);
    return answer.result as T;
  }

  /** One HTTP request carrying several calls; answers in the calls' order. Empty batches send nothing. */
  async batch(calls: ReadonlyArray<readonly [string, readonly unknown[]]>, timeoutMs = CALL_TIMEOUT_MS) {
    if (calls.length === 0) return [] as NodeAnswer[];
    const body = calls.map(([method, params], id) => ({ jsonrpc: '2.0', id, method, params }));
    const answers = (await this.#post(body, timeoutMs)) as JsonRpcAnswer[];
    if (!Array.isArray(answers)) throw new NodeUnreachable(`${this.name}: batch answered with a non-array`);
    const byId = new Map(answers.map((answer) => [answer.id, answer]));
    return calls.map(([method], id): NodeAnswer => {
      const answer = byId.get(id);
      if (answer === undefined) return { ok: false, error: new NodeRefused(method, { message: 'no answer in batch' }) };
      if (answer.error) return { ok: false, error: new NodeRefused(method, answer.error) };
      return { ok: true, result: answer.result };
    });
  }

  /** Sends a request body as it is and returns the node's answer as it is (mining calls on the leader). */
  raw(body: Buffer | string, timeoutMs = CALL_TIMEOUT_MS): Promise<string> {
    return this.#send(body, timeoutMs);
  }

  /** Closes the kept-alive connections. */
  close(): Promise<void> {
    return this.#pool.close();
  }

  async #post(body: unknown, timeoutMs: number): Promise<unknown> {
    const text = await this.#send(JSON.stringify(body), timeoutMs);
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new NodeUnreachable(`${this.name}: answer is not JSON`, { cause: err });
    }
  }

  async #send(body: Buffer | string, timeoutMs: number): Promise<string> {
    try {
      const res = await this.#pool.request({
        method: 'POST',
        path: this.#path,
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      return await res.body.text();
    } catch (err) {
      throw new NodeUnreachable(`${this.name}: ${(err as Error).message}`, { cause: err });
    }
  }
}
