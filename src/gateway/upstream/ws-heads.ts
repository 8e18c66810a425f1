/**
 * newHeads pushes from origins' `ws_address` for the chain tracker (chain/head-pushes.ts, SPEC §9), over
 * the `ws` library. One WebSocket per subscribed origin:
 *   - connect with Basic auth from the URL's userinfo and the outbound policy of every origin connect (a
 *     literal IP is checked before connecting, a name at each resolution); the origin's `header` map goes
 *     along only when `ws_address` names the same host as `address`: header secrets are bound to the
 *     address's destination (SPEC §8), so a ws_address elsewhere never receives them;
 *     the handshake is bounded by `timeoutMs` (5 s);
 *   - `eth_subscribe(["newHeads"])` (id "switchyard-chain"); its answer makes the push live; each
 *     `eth_subscription` notification of that subscription is parsed as a header and handed on;
 *   - a ping every 30 s; no pong before the next ping, or any close or error, ends the connection: the
 *     push is no longer live (the tracker polls again) and a new connection follows after 1 s, doubling to
 *     at most 60 s while attempts keep failing, back to 1 s once a subscription is live again;
 *   - an origin that refuses the subscription (an error answer) is retried the same way.
 * Frames over 1 MiB close the connection (a header is a few KiB). Addresses in logs are masked.
 * The same feed (OriginSubscriptionFeed) carries other subscriptions: `WsOriginFeeds` gives the
 * subscription hub an origin's newPendingTransactions (gateway/subscriptions/pending.ts).
 */
import WebSocket from 'ws';
import { parseHeader } from '../../chain/header.js';
import type { HeadPushListener, HeadPushSource } from '../../chain/types.js';
import type { Logger } from '../../log.js';
import { maskAddress, originTarget } from '../../model/origin-address.js';
import type { Origin, Pool } from '../../model/pool.js';
import type { ConnectGuard } from '../../outbound/policy.js';
import { CHAIN_REQUEST_ID } from './chain-source.js';

const PING_MS = 30_000;
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 60_000;
const MAX_FRAME_BYTES = 1_048_576;

export interface WsHeadOptions {
  readonly guard: ConnectGuard;
  readonly logger: Logger;
  /** Handshake bound (ms). */
  readonly timeoutMs: number;
}

export class WsHeadSubscriptions implements HeadPushSource {
  readonly #options: WsHeadOptions;

  constructor(options: WsHeadOptions) {
    this.#options = options;
  }

  subscribe(pool: Pool, origin: Origin, listener: HeadPushListener): () => void {
    const feed = new OriginSubscriptionFeed(
      origin,
      ['newHeads'],
      {
        result: (value) => {
          const header = parseHeader(value);
          if (header !== undefined) listener.head(header);
        },
        live: (up) => listener.live(up),
      },
      this.#options,
      { pool: pool.name, origin: origin.name },
    );
    feed.connect();
    return () => feed.stop();
  }
}

/** Whether two origin addresses name the same host (the `header` map's secrets may follow). */
function sameHost(address: string, wsAddress: string): boolean {
  try {
    return originTarget(address).hostname.toLowerCase() === originTarget(wsAddress).hostname.toLowerCase();
  } catch {
    return false;
  }
}

/** What one origin subscription delivers: each notification's `result`, and whether it is live. */
export interface OriginFeedListener {
  result(value: unknown): void;
  live(up: boolean): void;
}

/**
 * One `eth_subscribe(params)` on an origin's ws_address and its reconnects, under the rules above (also
 * used for newPendingTransactions by gateway/subscriptions/pending.ts).
 */
export class OriginSubscriptionFeed {
  readonly #url: string;
  readonly #headers: Record<string, string>;
  readonly #subscribe: string;
  readonly #what: string;
  readonly #listener: OriginFeedListener;
  readonly #options: WsHeadOptions;
  readonly #names: { pool: string; origin: string };
  #socket: WebSocket | undefined;
  #subscription: string | undefined;
  #retryMs = FIRST_RETRY_MS;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(
    origin: Origin,
    params: readonly unknown[],
    listener: OriginFeedListener,
    options: WsHeadOptions,
    names: { pool: string; origin: string },
  ) {
    this.#url = origin.ws_address as string;
    this.#subscribe = JSON.stringify({ jsonrpc: '2.0', id: CHAIN_REQUEST_ID, method: 'eth_subscribe', params });
    this.#what = String(params[0]);
    this.#headers = sameHost(origin.address, this.#url)
      ? Object.fromEntries(Object.entries(origin.header).map(([name, values]) => [name, values.join(', ')]))
      : {};
    this.#listener = listener;
    this.#options = options;
    this.#names = names;
  }

  connect(): void {
    if (this.#stopped) return;
    const { guard, timeoutMs } = this.#options;
    let host: string;
    try {
      host = originTarget(this.#url).hostname;
    } catch {
      this.#failed('unusable ws_address');
      return;
    }
    const refusal = guard.refusal(host); // a literal IP; a name is checked by `lookup` as it resolves
    if (refusal !== undefined) {
      this.#failed(`cannot connect (${refusal.message})`);
      return;
    }
    const socket = new WebSocket(this.#url, {
      headers: this.#headers,
      lookup: guard.lookup,
      handshakeTimeout: timeoutMs,
      maxPayload: MAX_FRAME_BYTES,
      perMessageDeflate: false,
      followRedirects: false,
    });
    this.#socket = socket;
    let alive = true;
    socket.on('open', () => {
      socket.send(this.#subscribe);
      this.#timer = setInterval(() => {
        if (!alive) {
          socket.terminate();
          return;
        }
        alive = false;
        socket.ping();
      }, PING_MS);
      this.#timer.unref();
    });
    socket.on('pong', () => {
      alive = true;
    });
    socket.on('message', (data, isBinary) => {
      if (!isBinary) this.#message(data.toString());
    });
    socket.on('error', (err) => {
      this.#options.logger.debug(`${this.#what} push connection failed`, {
        ...this.#names,
        url: maskAddress(this.#url),
        err,
      });
    });
    socket.on('close', () => {
      if (this.#socket === socket) this.#closed();
    });
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    clearTimeout(this.#timer);
    this.#socket?.terminate();
    this.#socket = undefined;
  }

  #message(text: string): void {
    let message: { id?: unknown; result?: unknown; error?: unknown; method?: unknown; params?: unknown };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return;
    }
    if (message.id === CHAIN_REQUEST_ID) {
      if (typeof message.result === 'string') {
        this.#subscription = message.result;
        this.#retryMs = FIRST_RETRY_MS;
        this.#listener.live(true);
        this.#options.logger.debug(`${this.#what} push live`, { ...this.#names, url: maskAddress(this.#url) });
      } else {
        this.#options.logger.info(`origin refused the ${this.#what} subscription; polling instead`, {
          ...this.#names,
          url: maskAddress(this.#url),
        });
        this.#socket?.terminate();
      }
      return;
    }
    if (message.method !== 'eth_subscription' || message.params === null || typeof message.params !== 'object') return;
    const { subscription, result } = message.params as { subscription?: unknown; result?: unknown };
    if (subscription !== this.#subscription) return;
    this.#listener.result(result);
  }

  #closed(): void {
    clearInterval(this.#timer);
    this.#socket = undefined;
    if (this.#subscription !== undefined) {
      this.#subscription = undefined;
      this.#listener.live(false);
    }
    this.#retry();
  }

  #failed(reason: string): void {
    this.#options.logger.debug(`${this.#what} push not possible`, {
      ...this.#names,
      url: maskAddress(this.#url),
      reason,
    });
    this.#retry();
  }

  #retry(): void {
    if (this.#stopped) return;
    const delay = this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, MAX_RETRY_MS);
    this.#timer = setTimeout(() => this.connect(), delay);
    this.#timer.unref();
  }
}

/** Any eth_subscribe on an origin's ws_address, under the same rules (the subscription hub's pushes). */
export class WsOriginFeeds {
  readonly #options: WsHeadOptions;

  constructor(options: WsHeadOptions) {
    this.#options = options;
  }

  subscribe(pool: Pool, origin: Origin, params: readonly unknown[], listener: OriginFeedListener): () => void {
    const feed = new OriginSubscriptionFeed(origin, params, listener, this.#options, {
      pool: pool.name,
      origin: origin.name,
    });
    feed.connect();
    return () => feed.stop();
  }
}
