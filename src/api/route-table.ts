/**
 * Routes of the management API and how a request finds one.
 *
 * A route file exports a factory returning `Route`s: method, a path pattern relative to `/client/v4`
 * (`/accounts/:account_id/load_balancers/pools/:pool_id`), the access it needs, optional zod schemas
 * and a handler. The server (api-server.ts) enforces, in this order, before the handler runs:
 *   1. `auth` — 'none' (public), 'read' (any valid token) or 'write' (a read-write token);
 *   2. a path with `:account_id` must name the token's own account (else 403, before any lookup, so
 *      nothing about another account leaks — not even whether an id exists);
 *   3. `body` — the JSON body is parsed and validated with the schema (400 / 1002 naming the field).
 * The same schemas generate the OpenAPI document (openapi.ts), so docs and validation cannot drift.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import type { ApiReply } from './envelope.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Access = 'none' | 'read' | 'write';

/** Who is calling: the token's identity, never the secret. */
export interface Caller {
  tokenId: string;
  accountId: string;
  readOnly: boolean;
}

export interface ApiRequest<Body = unknown> {
  method: HttpMethod;
  /** Path below `/client/v4`. */
  path: string;
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The validated body (schema output), or undefined for routes without a body schema. */
  body: Body;
  /** Present on every route whose access is not 'none'. */
  caller: Caller | null;
}

export interface Route<Body = unknown> {
  method: HttpMethod;
  path: string;
  auth: Access;
  /** One line for the OpenAPI document. */
  summary: string;
  tag?: string;
  /** Validates the JSON body; its input side is documented in OpenAPI. */
  body?: z.ZodType<Body>;
  /** Query parameters, for the OpenAPI document only (handlers parse them). */
  query?: z.ZodObject;
  /** The `result` schema, for the OpenAPI document only. */
  result?: z.ZodType;
  /** True when the route answers with `result_info` (a paginated list). */
  paginated?: boolean;
  /** HTTP status of a success, for the OpenAPI document (default 200). */
  successStatus?: number;
  handler(request: ApiRequest<Body>): Promise<ApiReply>;
}

/** Keeps the body type of one route while collecting routes of different bodies in one array. */
export function defineRoute<Body>(route: Route<Body>): Route<unknown> {
  return route as unknown as Route<unknown>;
}

export type RouteMatch =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allow: HttpMethod[] }
  | { kind: 'not-found' };

interface Compiled {
  route: Route;
  segments: string[];
}

export class RouteTable {
  readonly #routes: Compiled[] = [];

  constructor(routes: readonly Route[] = []) {
    for (const route of routes) this.add(route);
  }

  add(route: Route): void {
    if (!route.path.startsWith('/')) throw new Error(`route path must start with "/": ${route.path}`);
    const segments = route.path.split('/').slice(1);
    const clash = this.#routes.find(
      (other) => other.route.method === route.method && samePattern(other.segments, segments),
    );
    if (clash !== undefined) throw new Error(`duplicate route ${route.method} ${route.path}`);
    this.#routes.push({ route, segments });
  }

  routes(): readonly Route[] {
    return this.#routes.map((compiled) => compiled.route);
  }

  match(method: string, path: string): RouteMatch {
    const parts = path.split('/').slice(1);
    const allow: HttpMethod[] = [];
    for (const compiled of this.#routes) {
      const params = matchSegments(compiled.segments, parts);
      if (params === undefined) continue;
      if (compiled.route.method === method) return { kind: 'found', route: compiled.route, params };
      allow.push(compiled.route.method);
    }
    return allow.length > 0 ? { kind: 'method-not-allowed', allow } : { kind: 'not-found' };
  }
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, segment] of pattern.entries()) {
    const part = parts[i] as string;
    if (segment.startsWith(':')) {
      let value: string;
      try {
        value = decodeURIComponent(part);
      } catch {
        return undefined;
      }
      // Empty, or holding NUL (no id contains it, and PostgreSQL text cannot): names nothing.
      if (value === '' || value.includes('\0')) return undefined;
      params[segment.slice(1)] = value;
    } else if (segment !== part) {
      return undefined;
    }
  }
  return params;
}

function samePattern(a: string[], b: string[]): boolean {
  return (
    a.length === b.length && a.every((segment, i) => segment === b[i] || (segment[0] === ':' && b[i]?.[0] === ':'))
  );
}
