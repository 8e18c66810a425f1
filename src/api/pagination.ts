/**
 * Pagination for list endpoints and the bulk pools PATCH (seed §4.2–4.3, SPEC §3).
 *
 * Two forms, never mixed in one request (mixing is 400 / 1002):
 *   - `page` (≥ 1, default 1) and `per_page` (1..1000, default 25 — or the route's own default);
 *   - `limit` (1..1000, default 25) and `offset` (≥ 0, default 0).
 * Values must be plain decimal integers; a repeated parameter, an empty value or anything out of range
 * is 400 / 1002 naming the parameter. A page past the end is `result: []` with the real totals.
 *
 * `result_info` is `{page, per_page, count, total_count, total_pages}`. For limit/offset, `per_page` is
 * the limit and `page` is the page the first returned item falls on, `floor(offset / limit) + 1`
 * (exact when offset is a multiple of limit, which is how page-walking clients use it).
 */
import { z } from 'zod';
import { SwitchyardError } from '../errors/base.js';
import type { ResultInfo } from './envelope.js';

export const DEFAULT_PER_PAGE = 25;
export const MAX_PER_PAGE = 1000;
/** Upper bound for page and offset: keeps offsets exact integers on both database backends. */
const MAX_POSITION = 1_000_000_000;

export interface PageRequest {
  form: 'page' | 'offset';
  /** Rows to skip. */
  offset: number;
  /** Rows to return at most. */
  limit: number;
  /** As reported in result_info. */
  page: number;
  per_page: number;
}

export interface PaginationOptions {
  defaultPerPage?: number;
}

/** Allowed range of each parameter. */
const RANGES = {
  page: [1, MAX_POSITION],
  per_page: [1, MAX_PER_PAGE],
  limit: [1, MAX_PER_PAGE],
  offset: [0, MAX_POSITION],
} as const;
type PaginationParam = keyof typeof RANGES;

function rule(name: PaginationParam): string {
  return `must be an integer from ${RANGES[name][0]} to ${RANGES[name][1]}`;
}

/** A decimal integer in its parameter's range, as a query string value (no sign, exponent or hex). */
function integerQuery(name: PaginationParam, description: string) {
  const [min, max] = RANGES[name];
  return z
    .string()
    .regex(/^\d{1,10}$/, rule(name))
    .refine((raw) => Number(raw) >= min && Number(raw) <= max, rule(name))
    .optional()
    .describe(`${description} (${min}..${max})`);
}

/**
 * The query parameters: what `parsePagination` validates each value with, and what the OpenAPI document
 * shows (so the two cannot drift). Mixing the pairs and repeats are checked in `parsePagination`.
 */
export const paginationQuery = z.object({
  page: integerQuery('page', 'Page number, default 1. Not with limit/offset'),
  per_page: integerQuery('per_page', `Items per page, default ${DEFAULT_PER_PAGE}. Not with limit/offset`),
  limit: integerQuery('limit', `Items to return, default ${DEFAULT_PER_PAGE}. Not with page/per_page`),
  offset: integerQuery('offset', 'Items to skip, default 0. Not with page/per_page'),
});

export function parsePagination(query: URLSearchParams, options: PaginationOptions = {}): PageRequest {
  const defaultPerPage = options.defaultPerPage ?? DEFAULT_PER_PAGE;
  const page = integerParam(query, 'page');
  const perPage = integerParam(query, 'per_page');
  const limit = integerParam(query, 'limit');
  const offset = integerParam(query, 'offset');
  const pageForm = page !== undefined || perPage !== undefined;
  const offsetForm = limit !== undefined || offset !== undefined;
  if (pageForm && offsetForm) {
    throw new SwitchyardError(
      'API_VALIDATION',
      'pagination: use either page/per_page or limit/offset, not both in one request',
      { details: { parameters: ['page', 'per_page', 'limit', 'offset'].filter((name) => query.has(name)) } },
    );
  }
  if (offsetForm) {
    const size = limit ?? defaultPerPage;
    const skip = offset ?? 0;
    return { form: 'offset', offset: skip, limit: size, page: Math.floor(skip / size) + 1, per_page: size };
  }
  const size = perPage ?? defaultPerPage;
  const number = page ?? 1;
  return { form: 'page', offset: (number - 1) * size, limit: size, page: number, per_page: size };
}

export function resultInfo(request: PageRequest, count: number, totalCount: number): ResultInfo {
  return {
    page: request.page,
    per_page: request.per_page,
    count,
    total_count: totalCount,
    total_pages: Math.ceil(totalCount / request.per_page),
  };
}

/**
 * One page of a list endpoint: counts, reads the page's rows and maps them for the wire. Count and rows
 * are two queries outside a transaction, so a concurrent write may make them disagree for that one answer;
 * clients only use the totals to page.
 */
export async function listPage<Row, View>(
  page: PageRequest,
  count: () => Promise<number>,
  rows: (limit: number, offset: number) => Promise<Row[]>,
  view: (row: Row) => View,
): Promise<{ result: View[]; result_info: ResultInfo }> {
  const total = await count();
  const found = await rows(page.limit, page.offset);
  return { result: found.map(view), result_info: resultInfo(page, found.length, total) };
}

function integerParam(query: URLSearchParams, name: PaginationParam): number | undefined {
  const values = query.getAll(name);
  if (values.length === 0) return undefined;
  if (values.length > 1) throw new SwitchyardError('API_VALIDATION', `${name}: give it once; it ${rule(name)}`);
  const raw = values[0] as string;
  if (!paginationQuery.shape[name].safeParse(raw).success) {
    throw new SwitchyardError('API_VALIDATION', `${name}: "${raw.slice(0, 40)}" is out of range; it ${rule(name)}`);
  }
  return Number(raw);
}
