import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plainIds } from './batch-upstream.js';
import { parseBody, type RpcCall } from './request.js';

function calls(ids: string[]): RpcCall[] {
  const body = `[${ids.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"eth_chainId"}`).join(',')}]`;
  const parsed = parseBody(Buffer.from(body), 1000);
  assert.ok(parsed.batch);
  return parsed.elements.map((element) => {
    assert.ok(element.ok);
    return element.call;
  });
}

test('plain ids: short decimal integers and short strings without escapes, unique in the batch', () => {
  assert.deepEqual(plainIds(calls(['0', '1', '"a-1"', '999999999999999'])), ['0', '1', '"a-1"', '999999999999999']);
  for (const odd of ['1234567890123456', '-1', '1.0', '1e2', 'null', '"t\\u0077o"', `"${'x'.repeat(63)}"`]) {
    assert.equal(plainIds(calls(['1', odd])), undefined, odd);
  }
  assert.equal(plainIds(calls(['1', '2', '1'])), undefined, 'duplicate');
  assert.deepEqual(plainIds(calls(['1', `"${'x'.repeat(62)}"`]))?.length, 2, '64 bytes with the quotes');
});
