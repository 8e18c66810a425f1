/**
 * A small "provider" for the degraded leg (routing-legs.ts): a node:http server on a free 127.0.0.1 port,
 * in the bench process, that forwards every POST to `target` (the upstream nginx) on keep-alive
 * connections and makes a seeded share of the calls wait `stallMs` first (the tests' mulberry32 stream,
 * test/helpers/seeded-rng.ts, so a run can be replayed). It counts the calls it got, which is how the leg measures what hedging costs in extra
 * origin calls. Stopped with `close` (every connection and pending timer ends).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mulberry32 } from '../test/helpers/seeded-rng.js';

export class StallProxy {
  readonly url: string;
  /** Calls received since start (or the last `reset`). */
  calls = 0;
  /** Share of calls that stall (0..1), and for how long; changeable between legs. */
  stall: { share: number; ms: number } = { share: 0, ms: 0 };
  readonly #server: http.Server;
  readonly #agent: http.Agent;
  readonly #timers = new Set<NodeJS.Timeout>();
  #random: () => number;

  private constructor(server: http.Server, agent: http.Agent, url: string, seed: number) {
    this.#server = server;
    this.#agent = agent;
    this.url = url;
    this.#random = mulberry32(seed);
  }

  static async start(target: string, seed: number): Promise<StallProxy> {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });
    const server = http.createServer();
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const proxy = new StallProxy(server, agent, url, seed);
    server.on('request', (req, res) => proxy.#handle(new URL(target), req, res));
    return proxy;
  }

  /** Restarts the seeded stream and the count (each leg starts from the same draws). */
  reset(seed: number): void {
    this.#random = mulberry32(seed);
    this.calls = 0;
  }

  #handle(target: URL, req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      this.calls += 1;
      const body = Buffer.concat(chunks);
      const forward = (): void => {
        const upstream = http.request(
          target,
          {
            method: 'POST',
            agent: this.#agent,
            headers: { 'content-type': 'application/json', 'content-length': body.length },
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' });
            answer.pipe(res);
          },
        );
        upstream.on('error', () => res.destroy());
        upstream.end(body);
      };
      if (this.stall.share > 0 && this.#random() < this.stall.share) {
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          forward();
        }, this.stall.ms);
        this.#timers.add(timer);
      } else {
        forward();
      }
    });
  }

  async close(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#agent.destroy();
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }
}
