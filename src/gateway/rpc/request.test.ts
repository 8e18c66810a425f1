import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSwitchyardError } from '../../errors/base.js';
import { type Element, parseBody } from './request.js';

const parse = (text: string, maxBatch = 100) => parseBody(Buffer.from(text), maxBatch);

function single(text: string): Element {
  const parsed = parse(text);
  assert.equal(parsed.batch, false);
  return parsed.element;
}

function throwsCode(text: string, code: string, maxBatch = 100): void {
  assert.throws(
    () => parse(text, maxBatch),
    (err: unknown) => isSwitchyardError(err) && err.code === code,
  );
}

describe('parseBody', () => {
  it('keeps the raw id bytes and locates them in the element', () => {
    const text = '{"jsonrpc":"2.0","id":18446744073709551615,"method":"eth_chainId","params":[]}';
    const element = single(text);
    assert.ok(element.ok);
    assert.equal(element.call.idBytes.toString(), '18446744073709551615');
    assert.equal(element.call.method, 'eth_chainId');
    assert.deepEqual(element.call.params, []);
    const { id } = element.call;
    assert.ok(id);
    assert.equal(element.call.raw.subarray(id.start, id.end).toString(), '18446744073709551615');
  });

  it('treats a missing id as a notification', () => {
    const element = single('{"jsonrpc":"2.0","method":"eth_chainId"}');
    assert.ok(element.ok);
    assert.equal(element.call.id, undefined);
  });

  it('accepts string, number and null ids and object params', () => {
    for (const id of ['"x"', '-1.5e3', 'null']) {
      const element = single(`{"jsonrpc":"2.0","method":"m","params":{"a":1},"id":${id}}`);
      assert.ok(element.ok, id);
      assert.equal(element.call.idBytes.toString(), id);
    }
  });

  const invalid: Array<[string, RegExp, string]> = [
    ['{"method":"m","id":1}', /"jsonrpc" must be the string "2.0"/, '1'],
    ['{"jsonrpc":2.0,"method":"m","id":1}', /"jsonrpc"/, '1'],
    ['{"jsonrpc":"2.0","id":1}', /"method" must be a non-empty string/, '1'],
    ['{"jsonrpc":"2.0","method":5,"id":1}', /"method"/, '1'],
    ['{"jsonrpc":"2.0","method":"m","params":5,"id":1}', /"params" must be an array or an object/, '1'],
    ['{"jsonrpc":"2.0","method":"m","params":null,"id":1}', /"params"/, '1'],
    ['{"jsonrpc":"2.0","method":"m","id":true}', /"id" must be a string, a number or null/, 'null'],
    ['{"jsonrpc":"2.0","method":"m","id":[1]}', /"id"/, 'null'],
    ['{"jsonrpc":"2.0","method":"m","method":"n","id":1}', /appears more than once/, '1'],
    ['[1]', /must be a JSON object/, 'null'],
    ['"text"', /must be a JSON object/, 'null'],
  ];
  for (const [text, message, id] of invalid) {
    it(`refuses ${text}`, () => {
      const parsed = parse(text);
      const element = parsed.batch ? parsed.elements[0] : parsed.element;
      assert.ok(element && !element.ok);
      assert.match(element.error.message, message);
      assert.equal(element.idBytes.toString(), id);
      assert.equal(element.error.spec.rpc, -32600);
      assert.equal(element.error.httpStatus, parsed.batch ? 200 : 400);
    });
  }

  it('parse errors, empty batches and oversized batches fail the whole body', () => {
    throwsCode('{', 'RPC_PARSE_ERROR');
    throwsCode('', 'RPC_PARSE_ERROR');
    throwsCode('{"a":1} x', 'RPC_PARSE_ERROR');
    throwsCode('[]', 'RPC_EMPTY_BATCH');
    throwsCode('[1,2,3]', 'BATCH_TOO_LARGE', 2);
  });

  it('splits a batch into elements with their own bytes', () => {
    const parsed = parse('[ {"jsonrpc":"2.0","method":"a","id":"x"} , 7, {"jsonrpc":"2.0","method":"b"} ]');
    assert.ok(parsed.batch);
    assert.equal(parsed.elements.length, 3);
    const [a, seven, b] = parsed.elements;
    assert.ok(a?.ok && b?.ok && seven && !seven.ok);
    assert.equal(a.call.raw.toString(), '{"jsonrpc":"2.0","method":"a","id":"x"}');
    assert.equal(b.call.id, undefined);
  });
});
