import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listAll } from './pages.js';
import type { V4Response, V4ResultInfo } from './v4-client.js';

type Item = { id: string };
const items = (from: number, to: number): Item[] =>
  Array.from({ length: to - from }, (_, i) => ({ id: `p${from + i}` }));

/** A server paginating `all` honestly; `info` decides which totals it reports. */
function paginated(all: Item[], perPage: number, info: 'full' | 'none') {
  const calls: number[] = [];
  const fetchPage = async (page: number): Promise<V4Response<unknown>> => {
    calls.push(page);
    const result = all.slice((page - 1) * perPage, page * perPage);
    const resultInfo: V4ResultInfo | undefined =
      info === 'full'
        ? {
            page,
            per_page: perPage,
            count: result.length,
            total_count: all.length,
            total_pages: Math.ceil(all.length / perPage),
          }
        : undefined;
    return { result, resultInfo };
  };
  return { fetchPage, calls };
}

test('stops when total_count is reached, without asking for a page past the end', async () => {
  const server = paginated(items(0, 60), 25, 'full');
  const { items: got, pages } = await listAll<Item>(server.fetchPage, 'test');
  assert.equal(got.length, 60);
  assert.equal(pages, 3);
  assert.deepEqual(server.calls, [1, 2, 3]);
});

test('without totals, stops on the first empty page', async () => {
  const server = paginated(items(0, 50), 25, 'none');
  const { items: got } = await listAll<Item>(server.fetchPage, 'test');
  assert.equal(got.length, 50);
  assert.deepEqual(server.calls, [1, 2, 3]);
});

test('a server that returns every item on every page: stops at the first repeated page', async () => {
  const calls: number[] = [];
  const { items: got } = await listAll<Item>(async (page) => {
    calls.push(page);
    return { result: items(0, 70), resultInfo: { page: 1, per_page: 25 } };
  }, 'test');
  assert.equal(got.length, 70);
  assert.deepEqual(calls, [1, 2]);
});

test('pages that shift (an item created meanwhile) are de-duplicated by id', async () => {
  const pages = [items(0, 3), items(2, 5), []];
  const { items: got } = await listAll<Item>(
    async (page) => ({ result: pages[page - 1] ?? [], resultInfo: undefined }),
    'test',
  );
  assert.deepEqual(
    got.map((item) => item.id),
    ['p0', 'p1', 'p2', 'p3', 'p4'],
  );
});

test('a result that is not a list, or items without id, are errors', async () => {
  await assert.rejects(
    listAll<Item>(async () => ({ result: { id: 'x' }, resultInfo: undefined }), 'listing pools'),
    /listing pools: page 1 has no result array/,
  );
  await assert.rejects(
    listAll<Item>(async () => ({ result: [{ name: 'x' }], resultInfo: undefined }), 'listing pools'),
    /item 0 has no string "id"/,
  );
});
