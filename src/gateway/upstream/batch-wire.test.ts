import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { damaged } from '../../../test/helpers/damage.js';
import { Rng } from '../../../test/helpers/seeded-rng.js';
import { matchBatch, matchByScan } from './batch-wire.js';

const SPACES = ['', '', '', ' ', '\n', '\t '];
const RESULTS = [
  '"0x1bc16d674ec80000"',
  '"0x"',
  'null',
  'true',
  '12',
  '-0.5e3',
  '[]',
  '{}',
  '"a\\"b\\u00e9"',
  '"é"',
  '{"number":"0x10","transactions":[{"hash":"0x01"},{"hash":"0x02"}],"x":[1,[2,[3]]]}',
  '[{"a":null},"x",false]',
];
const ERRORS = [
  '{"code":-32000,"message":"missing trie node"}',
  '{"code":3,"message":"execution reverted","data":"0x"}',
];

function answer(rng: Rng, id: string, clean: boolean): string {
  const space = () => rng.pick(SPACES);
  const members = [`"id":${space()}${id}`];
  if (rng.chance(0.9)) members.unshift(`"jsonrpc":${space()}"2.0"`);
  members.push(rng.chance(0.85) ? `"result":${space()}${rng.pick(RESULTS)}` : `"error":${rng.pick(ERRORS)}`);
  if (!clean) {
    if (rng.chance(0.1)) members.push(rng.pick(['"extra":1', '"id":99', '"result":1', `"id":${id}`, '"error":null']));
    if (rng.chance(0.05)) members.splice(rng.int(members.length), 1);
    if (rng.chance(0.3)) members.reverse();
  }
  return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`;
}

function body(rng: Rng, ids: string[]): string {
  const clean = rng.chance(0.5);
  const order = ids.slice();
  if (!clean && rng.chance(0.3)) order.reverse();
  if (!clean && rng.chance(0.1)) order.pop();
  if (!clean && rng.chance(0.1)) order.push(rng.pick(ids));
  const text = `[${space(rng)}${order.map((id) => answer(rng, id, clean)).join(`${space(rng)},${space(rng)}`)}]`;
  return clean ? text : damaged(rng, text);
}

function space(rng: Rng): string {
  return rng.pick(SPACES);
}

describe('matchBatch', () => {
  it('reads answers given in order in one pass, as the scan reads them', () => {
    const text =
      '[{"jsonrpc":"2.0","id":1,"result":"0x1"}, {"id":"b","error":{"code":-32000,"message":"x"},"jsonrpc":"2.0"}]';
    const matched = matchBatch(Buffer.from(text), ['1', '"b"']);
    assert.equal(matched?.inOrder, true);
    assert.deepEqual(matched, matchByScan(Buffer.from(text), ['1', '"b"']));
    assert.equal(matched?.answers[1]?.outcome.key, 'error');
    assert.equal(matched?.answers[1]?.outcome.value.kind, 'object');
  });

  it('matches out-of-order and partial arrays by id', () => {
    const text = '[{"jsonrpc":"2.0","id":2,"result":"0x2"},{"jsonrpc":"2.0","id":1,"result":"0x1"}]';
    const matched = matchBatch(Buffer.from(text), ['1', '2', '3']);
    assert.equal(matched?.inOrder, false);
    assert.equal(matched?.answers[0]?.body.toString(), '{"jsonrpc":"2.0","id":1,"result":"0x1"}');
    assert.equal(matched?.answers[2], undefined);
  });

  it('gives exactly the scan’s answers on 3,000 generated and damaged arrays', () => {
    const seed = Number(process.env.SWITCHYARD_BATCH_SEED ?? 1);
    const rng = new Rng(seed);
    let inOrder = 0;
    const runs = 3000;
    for (let n = 0; n < runs; n += 1) {
      const size = 1 + rng.int(rng.chance(0.1) ? 40 : 6);
      const ids = Array.from({ length: size }, (_, k) => (rng.chance(0.8) ? String(k + 1) : `"s${k}"`));
      const text = Buffer.from(body(rng, ids));
      const matched = matchBatch(text, ids);
      assert.deepEqual(matched, matchByScan(text, ids), `seed ${seed} array ${n}: ${text.toString().slice(0, 300)}`);
      if (matched?.inOrder) inOrder += 1;
    }
    assert.ok(inOrder > runs * 0.3 && inOrder < runs * 0.95, `${inOrder} of ${runs} in order`);
  });
});
