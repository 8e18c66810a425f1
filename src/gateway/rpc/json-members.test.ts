import assert from 'node:assert/strict';
import { test } from 'node:test';
import { duplicateMember } from './json-members.js';

const find = (text: string) => duplicateMember(Buffer.from(text));

test('the first member an object has twice, by its path; keys compared decoded', () => {
  assert.equal(find('{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}'), undefined, 'the same key in different objects');
  assert.deepEqual(find('{"a":1,"a":2}'), ['a']);
  assert.deepEqual(find('{"a":{"b":1,"c":{},"b":2}}'), ['a', 'b']);
  assert.deepEqual(find('[1,{"x":[],"y":{"z":[{"k":1},{"k":1,"k":2}]}}]'), ['1', 'y', 'z', '1', 'k']);
  assert.deepEqual(find('{"name":1,"n\\u0061me":2}'), ['name'], 'an escaped spelling is the same key');
  assert.deepEqual(find(' { "a" : 1 , "b" : [ ] , "a" : 2 } '), ['a'], 'whitespace anywhere');
  assert.equal(find('{"s":"}{\\"s\\":1,","t":"[{\\"u\\":1}]"}'), undefined, 'brackets and quotes inside strings');
  assert.equal(find('[]'), undefined);
  assert.equal(find('"a"'), undefined);
  assert.equal(find('{"a":1,'), undefined, 'malformed: nothing named');
});

test('deep nesting is walked without recursion', () => {
  const depth = 200_000;
  assert.equal(find(`${'['.repeat(depth)}${']'.repeat(depth)}`), undefined);
  assert.deepEqual(find(`${'{"a":'.repeat(depth)}1${',"b":1}'.repeat(depth - 1)},"a":2}`)?.length, 1);
});
