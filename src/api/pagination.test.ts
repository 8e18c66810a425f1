import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isSwitchyardError } from '../errors/base.js';
import { parsePagination, resultInfo } from './pagination.js';

const parse = (query: string, defaultPerPage?: number) =>
  parsePagination(new URLSearchParams(query), defaultPerPage === undefined ? {} : { defaultPerPage });

test('page/per_page and limit/offset map to the same window', () => {
  assert.deepEqual(parse(''), { form: 'page', offset: 0, limit: 25, page: 1, per_page: 25 });
  assert.deepEqual(parse('page=3&per_page=10'), { form: 'page', offset: 20, limit: 10, page: 3, per_page: 10 });
  assert.deepEqual(parse('limit=10&offset=20'), { form: 'offset', offset: 20, limit: 10, page: 3, per_page: 10 });
  assert.deepEqual(parse('offset=7'), { form: 'offset', offset: 7, limit: 25, page: 1, per_page: 25 });
  assert.equal(parse('', 1000).limit, 1000);
});

test('mixing pairs, repeats and out-of-range values are API_VALIDATION naming the parameter', () => {
  for (const query of [
    'page=1&limit=2',
    'per_page=2&offset=0',
    'page=0',
    'per_page=1001',
    'limit=0',
    'offset=-1',
    'page=1&page=1',
    'page=',
    'page=0x1',
    'per_page=+5',
  ]) {
    assert.throws(
      () => parse(query),
      (err: unknown) => isSwitchyardError(err) && err.code === 'API_VALIDATION' && err.spec.v4 === 1002,
      query,
    );
  }
  assert.throws(() => parse('per_page=5000'), /per_page/);
});

test('result_info counts pages with ceil, 0 pages when empty', () => {
  const page = parse('page=3&per_page=25');
  assert.deepEqual(resultInfo(page, 13, 63), { page: 3, per_page: 25, count: 13, total_count: 63, total_pages: 3 });
  assert.equal(resultInfo(page, 0, 0).total_pages, 0);
});
