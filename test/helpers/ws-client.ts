/**
 * A raw JSON-RPC client over the gateway's WebSocket (the `ws` library) for tests: keeps every message in
 * order, matches answers by id (bounded waits), and sorts `eth_subscription` notifications by subscription.
 */
import WebSocket from 'ws';

export type Json = Record<string, unknown>;

export interface RpcAnswerMessage {
  id: number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export class WsRpcClient {
  /** Every message received, parsed, oldest first; `texts` holds them as sent. */
  readonly messages: Json[] = [];
  readonly texts: string[] = [];
  readonly ws: WebSocket;
  #id = 0;
  readonly #waiters = new Map<number, (answer: RpcAnswerMessage) => void>();

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data) => {
      const text = String(data);
      const message = JSON.parse(text) as Json;
      this.texts.push(text);
      this.messages.push(message);
      if (typeof message.id === 'number') this.#waiters.get(message.id)?.(message as unknown as RpcAnswerMessage);
    });
  }

  static async open(url: string): Promise<WsRpcClient> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new WsRpcClient(ws);
  }

  /** One call; its whole answer (result or error), within `timeoutMs`. */
  ask(method: string, params: unknown[] = [], timeoutMs = 10_000): Promise<RpcAnswerMessage> {
    const id = ++this.#id;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(id);
        reject(new Error(`no answer to ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiters.set(id, (answer) => {
        clearTimeout(timer);
        this.#waiters.delete(id);
        resolve(answer);
      });
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  /** One call's result; an error answer throws. */
  async result<T>(method: string, params: unknown[] = []): Promise<T> {
    const answer = await this.ask(method, params);
    if (answer.error !== undefined) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    return answer.result as T;
  }

  /** The `params` of every notification of subscription `id` so far ({subscription, result} or {…, error}). */
  notifications(id: string): Array<{ subscription: string; result?: Json; error?: { code: number; message: string } }> {
    return this.messages
      .filter((m) => m.method === 'eth_subscription' && (m.params as { subscription?: unknown }).subscription === id)
      .map((m) => m.params as { subscription: string; result?: Json });
  }

  /** The results of subscription `id` so far. */
  results(id: string): Json[] {
    return this.notifications(id).flatMap((n) => (n.result === undefined ? [] : [n.result]));
  }

  close(): void {
    this.ws.close();
  }
}
