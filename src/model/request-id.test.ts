import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_REQUEST_ID_LENGTH, requestIdOf } from './request-id.js';

test('a client id of 1–128 visible ASCII characters is kept as sent', () => {
  for (const id of ['a', 'req-42', '!~#{}', 'x'.repeat(MAX_REQUEST_ID_LENGTH)]) assert.equal(requestIdOf(id), id);
});

test('an absent, empty, long, spaced, controlled or non-ASCII id is replaced by a made one', () => {
  const made = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  for (const id of [undefined, '', 'x'.repeat(MAX_REQUEST_ID_LENGTH + 1), 'a b', 'a\tb', 'a\u007fb', 'é']) {
    assert.match(requestIdOf(id), made, JSON.stringify(id));
  }
  assert.notEqual(requestIdOf(undefined), requestIdOf(undefined));
});
