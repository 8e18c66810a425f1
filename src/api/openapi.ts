/**
 * The OpenAPI 3.1 document of the management API, generated from the routes themselves: the same zod
 * schemas that validate request bodies describe them here (`z.toJSONSchema`, input side), so the
 * document cannot drift from what the server accepts. Served without a token at
 * `GET /client/v4/openapi.json`; built once on first request.
 */
import { z } from 'zod';
import type { Route, RouteTable } from './route-table.js';

type JsonSchema = Record<string, unknown>;

const errorEnvelope: JsonSchema = {
  type: 'object',
  required: ['success', 'errors', 'messages', 'result'],
  properties: {
    success: { const: false },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'integer', minimum: 1000 },
          message: { type: 'string' },
          source: { type: 'object', properties: { pointer: { type: 'string' } } },
        },
      },
    },
    messages: { type: 'array' },
    result: { type: 'null' },
  },
};

const resultInfo: JsonSchema = {
  type: 'object',
  required: ['page', 'per_page', 'count', 'total_count', 'total_pages'],
  properties: Object.fromEntries(
    ['page', 'per_page', 'count', 'total_count', 'total_pages'].map((key) => [key, { type: 'integer' }]),
  ),
};

const ERROR_STATUSES: Record<string, string> = {
  '400': 'Validation failed (1002), value not unique (1003) or object in use',
  '401': 'Missing, malformed or unknown token (10000)',
  '403': "Another account's path, or a read-only token on a write (10000)",
  '404': 'No such route or object (7003)',
};

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

function operation(route: Route): JsonSchema {
  const parameters: JsonSchema[] = [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  if (route.query !== undefined) {
    const shape = toSchema(route.query, 'input') as { properties?: Record<string, JsonSchema> };
    for (const [name, schema] of Object.entries(shape.properties ?? {})) {
      const { description, ...rest } = schema;
      parameters.push({ name, in: 'query', required: false, schema: rest, description });
    }
  }
  const success: JsonSchema = {
    type: 'object',
    required: ['success', 'errors', 'messages', 'result'],
    properties: {
      success: { const: true },
      errors: { type: 'array', maxItems: 0 },
      messages: { type: 'array' },
      result: route.result === undefined ? {} : toSchema(route.result, 'output'),
      ...(route.paginated ? { result_info: { $ref: '#/components/schemas/ResultInfo' } } : {}),
    },
  };
  const responses: JsonSchema = {
    [String(route.successStatus ?? 200)]: {
      description: 'Success',
      content: { 'application/json': { schema: success } },
    },
  };
  const statuses = route.auth === 'none' ? ['400', '404'] : Object.keys(ERROR_STATUSES);
  for (const status of statuses) {
    responses[status] = {
      description: ERROR_STATUSES[status],
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    };
  }
  return {
    summary: route.summary,
    ...(route.tag === undefined ? {} : { tags: [route.tag] }),
    ...(route.auth === 'none' ? { security: [] } : {}),
    ...(route.auth === 'write' ? { description: 'Needs a read-write token.' } : {}),
    parameters,
    ...(route.body === undefined
      ? {}
      : {
          requestBody: {
            // Optional only where the schema accepts no body at all (e.g. a token roll).
            required: !route.body.safeParse(undefined).success,
            content: { 'application/json': { schema: toSchema(route.body, 'input') } },
          },
        }),
    responses,
  };
}

export function buildOpenApi(routes: readonly Route[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    paths[path] ??= {};
    (paths[path] as Record<string, JsonSchema>)[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchyard management API',
      version: 'v4',
      description: 'Cloudflare v4-compatible Load Balancing and Notifications API of a Switchyard gateway.',
    },
    servers: [{ url: '/client/v4' }],
    security: [{ bearerAuth: [] }],
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
      schemas: { ErrorEnvelope: errorEnvelope, ResultInfo: resultInfo },
    },
    paths,
  };
}

/** The route serving the document: the document is the whole body, not wrapped in an envelope. */
export function openApiRoute(router: RouteTable): Route {
  let cached: JsonSchema | undefined;
  return {
    method: 'GET',
    path: '/openapi.json',
    auth: 'none',
    summary: 'This OpenAPI document',
    tag: 'meta',
    async handler() {
      cached ??= buildOpenApi(router.routes());
      return { result: null, raw: cached };
    },
  };
}
