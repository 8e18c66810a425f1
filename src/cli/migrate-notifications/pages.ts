/**
 * Walks a paginated v4 list without trusting the server to paginate correctly.
 *
 * Stops at the first of:
 * - an empty page (`result: []`), which is how a page past the end looks;
 * - a page whose ids were all seen before — a server that ignores `page` (or returns every item on
 *   every page) would otherwise loop forever;
 * - `total_count` items seen, or `total_pages` reached, when the server reports them;
 * - `MAX_PAGES` pages (an error: something is badly wrong with the server).
 * Items seen twice (pages shifting while items are created) are yielded once per page they appear on but
 * marked, so callers can de-duplicate.
 */
import { V4ApiError, type V4Response, type V4ResultInfo } from './v4-client.js';

export const MAX_PAGES = 10_000;

export interface Page<T> {
  page: number;
  items: T[];
  /** Ids on this page that no earlier page had. */
  freshIds: Set<string>;
  resultInfo: V4ResultInfo | undefined;
}

export async function* walkPages<T extends { id: string }>(
  fetchPage: (page: number) => Promise<V4Response<unknown>>,
  describe: string,
): AsyncGenerator<Page<T>> {
  const seen = new Set<string>();
  for (let page = 1; page <= MAX_PAGES; page++) {
    const { result, resultInfo } = await fetchPage(page);
    if (!Array.isArray(result)) {
      throw new V4ApiError(`${describe}: page ${page} has no result array; is this a v4 API?`, {});
    }
    const items = result.map((item, i) => checkItem<T>(item, `${describe}: page ${page}, item ${i}`));
    if (items.length === 0) return;
    const freshIds = new Set(items.map((item) => item.id).filter((id) => !seen.has(id)));
    if (freshIds.size === 0) return; // the server repeated a page: it ignores pagination
    for (const id of freshIds) seen.add(id);
    yield { page, items, freshIds, resultInfo };
    const total = resultInfo?.total_count;
    if (typeof total === 'number' && seen.size >= total) return;
    const pages = resultInfo?.total_pages;
    if (typeof pages === 'number' && pages > 0 && page >= pages) return;
  }
  throw new V4ApiError(`${describe}: gave up after ${MAX_PAGES} pages`, {});
}

/** Every item of a list, de-duplicated by id, in the order first seen. */
export async function listAll<T extends { id: string }>(
  fetchPage: (page: number) => Promise<V4Response<unknown>>,
  describe: string,
): Promise<{ items: T[]; pages: number }> {
  const byId = new Map<string, T>();
  let pages = 0;
  for await (const page of walkPages<T>(fetchPage, describe)) {
    pages++;
    for (const item of page.items) if (!byId.has(item.id)) byId.set(item.id, item);
  }
  return { items: [...byId.values()], pages };
}

function checkItem<T extends { id: string }>(item: unknown, where: string): T {
  if (item === null || typeof item !== 'object' || typeof (item as { id?: unknown }).id !== 'string') {
    throw new V4ApiError(`${where} has no string "id"`, {});
  }
  return item as T;
}
