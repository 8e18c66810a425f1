/**
 * A small v4 API on node:http (port 0) with just what the migration tool calls: pools list and bulk
 * PATCH, policies CRUD, webhook lookup. Knobs make it misbehave the ways real servers do (ignoring
 * pagination, failing the Nth PATCH, pools appearing mid-run).
 *
 * It also audits the one rule that must never break: every pool whose email a bulk PATCH clears must be
 * covered, at that moment, by enabled health policies delivering each (address, source, direction) its
 * legacy email delivered. The check is written independently of src/migration/ on purpose.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StubPool {
  id: string;
  name: string;
  notification_email: string;
  notification_filter: {
    origin?: { disable?: boolean; healthy?: boolean | null } | null;
    pool?: { disable?: boolean; healthy?: boolean | null } | null;
  } | null;
}

export interface StubPolicy {
  id: string;
  name: string;
  description: string;
  enabled: boolean;
  alert_type: string;
  mechanisms: { email?: Array<{ id: string }>; webhooks?: Array<{ id: string }> };
  filters: Record<string, string[]>;
}

export interface StubOptions {
  accountId: string;
  token: string;
  /** Every page is the whole list and a bulk PATCH clears everything; no totals in result_info. */
  ignorePagination?: boolean;
  /** Status to answer the nth (1-based) bulk PATCH with, instead of applying it. */
  failPatch?: (n: number) => number | undefined;
  /** Runs before the nth bulk PATCH is applied (e.g. to create a pool mid-run). */
  beforePatch?: (n: number, stub: StubApi) => void;
  /** Runs after the nth bulk PATCH is applied. */
  afterPatch?: (n: number, stub: StubApi) => void;
  webhookIds?: string[];
}

const hex32 = (): string => randomUUID().replaceAll('-', '');

export class StubApi {
  readonly pools = new Map<string, StubPool>();
  readonly policies = new Map<string, StubPolicy>();
  /** Every request, in order: "METHOD /path?query". */
  readonly requests: string[] = [];
  /** Broken safety rule, one line per pool cleared without coverage. */
  readonly violations: string[] = [];
  patches = 0;
  url = '';
  #server: Server;
  #options: StubOptions;

  constructor(options: StubOptions) {
    this.#options = options;
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((err: unknown) => send(res, 500, fail(10001, String(err))));
    });
  }

  static async start(options: StubOptions): Promise<StubApi> {
    const stub = new StubApi(options);
    await new Promise<void>((resolve) => stub.#server.listen(0, '127.0.0.1', resolve));
    stub.url = `http://127.0.0.1:${(stub.#server.address() as AddressInfo).port}/client/v4`;
    return stub;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  addPool(name: string, email: string, filter: StubPool['notification_filter'] = null): StubPool {
    const pool = { id: hex32(), name, notification_email: email, notification_filter: filter };
    this.pools.set(pool.id, pool);
    return pool;
  }

  sorted(): StubPool[] {
    return [...this.pools.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1));
  }

  withEmail(): StubPool[] {
    return this.sorted().filter((pool) => pool.notification_email !== '');
  }

  writes(): string[] {
    return this.requests.filter((line) => !line.startsWith('GET '));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stub');
    this.requests.push(`${req.method} ${url.pathname}${url.search}`);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;

    if (req.headers.authorization !== `Bearer ${this.#options.token}`) {
      return send(res, 401, fail(10000, 'Authentication error'));
    }
    const match = /^\/client\/v4\/accounts\/([^/]+)\/(.+)$/.exec(url.pathname);
    if (match === null) return send(res, 404, fail(7003, 'No route for that URI'));
    if (match[1] !== this.#options.accountId) return send(res, 403, fail(10000, 'Authentication error'));
    const rest = match[2] ?? '';
    const method = req.method ?? 'GET';

    if (rest === 'load_balancers/pools' && method === 'GET') return this.#listPools(res, url);
    if (rest === 'load_balancers/pools' && method === 'PATCH') return this.#bulkPatch(res, url, body);
    if (rest === 'alerting/v3/policies' && method === 'GET') {
      const all = [...this.policies.values()];
      const page = Number(url.searchParams.get('page') ?? 1);
      return send(
        res,
        200,
        ok(page === 1 ? all : [], {
          page,
          per_page: all.length,
          count: page === 1 ? all.length : 0,
          total_count: all.length,
          total_pages: 1,
        }),
      );
    }
    if (rest === 'alerting/v3/policies' && method === 'POST') {
      const problem = this.#invalidPolicy(body);
      if (problem !== undefined) return send(res, 400, fail(1002, problem));
      const id = randomUUID();
      this.policies.set(id, { id, description: '', ...body });
      return send(res, 200, ok({ id }));
    }
    const policy = /^alerting\/v3\/policies\/([^/]+)$/.exec(rest);
    if (policy !== null) {
      const existing = this.policies.get(policy[1] ?? '');
      if (existing === undefined) return send(res, 404, fail(7003, 'policy not found'));
      if (method === 'GET') return send(res, 200, ok(existing));
      if (method === 'PUT') {
        const next = { ...existing, ...body, id: existing.id };
        const problem = this.#invalidPolicy(next);
        if (problem !== undefined) return send(res, 400, fail(1002, problem));
        this.policies.set(existing.id, next);
        return send(res, 200, ok({ id: existing.id }));
      }
    }
    const webhook = /^alerting\/v3\/destinations\/webhooks\/([^/]+)$/.exec(rest);
    if (webhook !== null && method === 'GET') {
      if (!(this.#options.webhookIds ?? []).includes(webhook[1] ?? ''))
        return send(res, 404, fail(7003, 'webhook not found'));
      return send(res, 200, ok({ id: webhook[1], name: 'ops-hook', type: 'generic' }));
    }
    return send(res, 404, fail(7003, 'No route for that URI'));
  }

  #page(url: URL): { items: StubPool[]; info: Record<string, number> } {
    const all = this.sorted();
    if (this.#options.ignorePagination)
      return { items: all, info: { page: 1, per_page: all.length, count: all.length } };
    const page = Number(url.searchParams.get('page') ?? 1);
    const perPage = Number(url.searchParams.get('per_page') ?? 25);
    const items = all.slice((page - 1) * perPage, page * perPage);
    return {
      items,
      info: {
        page,
        per_page: perPage,
        count: items.length,
        total_count: all.length,
        total_pages: Math.ceil(all.length / perPage),
      },
    };
  }

  #listPools(res: ServerResponse, url: URL): void {
    const { items, info } = this.#page(url);
    send(res, 200, ok(items, info));
  }

  #bulkPatch(res: ServerResponse, url: URL, body: unknown): void {
    if (JSON.stringify(body) !== '{"notification_email":""}') {
      send(res, 400, fail(1002, 'only {"notification_email": ""} is accepted'));
      return;
    }
    const n = ++this.patches;
    const status = this.#options.failPatch?.(n);
    if (status !== undefined) {
      send(res, status, fail(10001, `stub: PATCH number ${n} fails`));
      return;
    }
    this.#options.beforePatch?.(n, this);
    const { items, info } = this.#page(url);
    for (const pool of items) {
      if (pool.notification_email === '') continue;
      const gap = this.#uncovered(pool);
      if (gap !== undefined) this.violations.push(`${pool.name} cleared without coverage: ${gap}`);
      pool.notification_email = '';
    }
    send(res, 200, ok(items, info));
    this.#options.afterPatch?.(n, this);
  }

  /** Independent coverage check: which delivery of the legacy email no policy takes over, if any. */
  #uncovered(pool: StubPool): string | undefined {
    const addresses = pool.notification_email.split(',').map((a) => a.trim().toLowerCase());
    for (const source of ['origin', 'pool'] as const) {
      const part = pool.notification_filter?.[source];
      if (part?.disable === true) continue;
      const healths =
        part?.healthy === true ? ['Healthy'] : part?.healthy === false ? ['Unhealthy'] : ['Healthy', 'Unhealthy'];
      for (const health of healths) {
        for (const address of addresses) {
          const found = [...this.policies.values()].some(
            (p) =>
              p.enabled &&
              p.alert_type === 'load_balancing_health_alert' &&
              (p.mechanisms.email ?? []).some((m) => m.id.toLowerCase() === address) &&
              (p.filters.pool_id ?? [pool.id]).includes(pool.id) &&
              (p.filters.event_source ?? [source]).includes(source) &&
              (p.filters.new_health ?? [health]).includes(health),
          );
          if (!found) return `${address} ${source} ${health}`;
        }
      }
    }
    return undefined;
  }

  #invalidPolicy(body: unknown): string | undefined {
    const p = body as Partial<StubPolicy> | undefined;
    if (p === undefined || typeof p.name !== 'string' || p.name === '') return 'name is required';
    if (p.alert_type !== 'load_balancing_health_alert') return 'alert_type is invalid';
    if (typeof p.enabled !== 'boolean') return 'enabled is required';
    if (p.mechanisms === undefined) return 'mechanisms is required';
    for (const id of p.filters?.pool_id ?? []) if (!this.pools.has(id)) return `filters.pool_id: unknown pool ${id}`;
    for (const hook of p.mechanisms.webhooks ?? []) {
      if (!(this.#options.webhookIds ?? []).includes(hook.id))
        return `mechanisms.webhooks: unknown destination ${hook.id}`;
    }
    return undefined;
  }
}

function ok(result: unknown, resultInfo?: Record<string, number>): unknown {
  return {
    success: true,
    errors: [],
    messages: [],
    result,
    ...(resultInfo === undefined ? {} : { result_info: resultInfo }),
  };
}

function fail(code: number, message: string): unknown {
  return { success: false, errors: [{ code, message }], messages: [], result: null };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
