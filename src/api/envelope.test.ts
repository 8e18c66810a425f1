import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonText, successBody, successEnvelope } from './envelope.js';

test('a JsonText result gives the same bytes as the envelope of its value', () => {
  const value = [
    { name: 'ü "x"', n: 1 },
    { name: 'b', n: null },
  ];
  const text = JSON.stringify(value);
  const chunks = [Buffer.from(text.slice(0, 7)), Buffer.from(text.slice(7))];
  const info = { page: 1, per_page: 2, count: 2, total_count: 2, total_pages: 1 };
  for (const reply of [
    { result: value, result_info: info },
    { result: value },
    { result: value, messages: [{ code: 1, message: 'm' }] },
  ]) {
    const body = successBody({ ...reply, result: new JsonText(chunks) });
    assert.ok(Buffer.isBuffer(body));
    assert.equal(body.toString('utf8'), JSON.stringify(successEnvelope(reply)));
    assert.equal(successBody(reply), JSON.stringify(successEnvelope(reply)));
  }
  assert.deepEqual(JSON.parse(JSON.stringify({ x: new JsonText(chunks) })), { x: value });
});
