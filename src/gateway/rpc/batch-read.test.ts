import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { damaged } from '../../../test/helpers/damage.js';
import { Rng } from '../../../test/helpers/seeded-rng.js';
import { readBatch, readSingle } from './batch-read.js';
import { plainIds } from './batch-upstream.js';
import { type Element, parseAny, parseBody, type RpcCall } from './request.js';

/** The general reader's verdict: its elements, or the code of the error it throws. */
function general(body: Buffer): Element[] | string {
  try {
    const parsed = parseAny(body, MAX);
    return parsed.batch ? parsed.elements : 'single';
  } catch (err) {
    return (err as { code: string }).code;
  }
}

const MAX = 50;

/** Both readers agree: the fast one reads the body as the general one does, or leaves it to it. */
function assertSame(body: Buffer, label: string): boolean {
  const fast = readBatch(body, MAX);
  if (fast === undefined) return false;
  const slow = general(body);
  assert.ok(Array.isArray(slow), `${label}: the general reader gives ${String(slow)}`);
  assert.equal(fast.elements.length, slow.length, label);
  fast.elements.forEach((element, k) => {
    assertSameCall(element, slow[k] as Element, `${label}: element ${k}`);
  });
  const calls = slow.map((element) => (element as { ok: true; call: RpcCall }).call);
  assert.deepEqual(fast.plainIds, plainIds(calls) ?? false, `${label}: plain ids`);
  return true;
}

/** As assertSame, for a single request. */
function assertSameSingle(body: Buffer, label: string): boolean {
  const fast = readSingle(body);
  if (fast === undefined) return false;
  let slow: ReturnType<typeof parseAny>;
  try {
    slow = parseAny(body, MAX);
  } catch (err) {
    assert.fail(`${label}: the general reader throws ${(err as { code: string }).code}`);
  }
  assert.ok(!slow.batch, `${label}: the general reader reads a batch`);
  assertSameCall(fast, slow.element, label);
  return true;
}

/** One call as both readers give it: the same bytes, id, method, params and members. */
function assertSameCall(element: Element, other: Element, label: string): void {
  assert.ok(element.ok && other.ok, `${label}: valid in both`);
  const a = element.call;
  const b = other.call;
  assert.deepEqual(a.raw, b.raw, `${label}: raw`);
  assert.deepEqual(a.id, b.id, `${label}: id span`);
  assert.deepEqual(a.idBytes, b.idBytes, `${label}: id bytes`);
  assert.equal(a.method, b.method, `${label}: method`);
  // Object.is: -0 stays -0, as JSON.parse gives it.
  assert.deepStrictEqual(a.params, b.params, `${label}: params`);
  assert.equal(a.extraMembers, b.extraMembers, `${label}: extra members`);
}

const SPACES = ['', '', '', ' ', '\n', '\t', ' \r\n '];
const IDS = [
  '1',
  '7',
  '0',
  '42',
  '999999999999999',
  '1234567890123456',
  '-1',
  '1.5',
  '1e2',
  '-0',
  '0.0',
  '18446744073709551615',
  '1e400',
  'null',
  '"a"',
  '"req-1"',
  '"x\\"y"',
  '"\\u0041"',
  '"é"',
  '01',
  'true',
  '{}',
  '"a',
];
const METHODS = [
  '"eth_getBalance"',
  '"eth_call"',
  '"eth_chainId"',
  '"net_version"',
  '""',
  '"eth_\\u0063all"',
  '"ëth"',
  '42',
  'null',
  '"a b"',
];
const PARAMS = [
  '[]',
  '[ ]',
  '["0x00000000000000000000000000000000000000aa","latest"]',
  '["0x1", true]',
  '["0x1"]',
  '["0x2",3,"latest"]',
  '[1,2,3,"four"]',
  '[1, -0, 1.5e3, 2E-2, null, false]',
  '[{"to":"0x00000000000000000000000000000000000000aa","data":"0x"},"latest"]',
  '["a\\nb"]',
  '["é"]',
  '[[1,[2,{}]]]',
  '{}',
  '{"a":1}',
  '"x"',
  '1',
  'null',
  '[1,]',
  '[01]',
  '["\u0001"]',
  '[1 2]',
];
const VERSIONS = ['"2.0"', '"2.0"', '"2.0"', '"2\\u002e0"', '"1.0"', '2.0', '"2.0 "'];

/** Ids, methods and params the one-pass reader takes (a clean batch draws only these). */
const CLEAN_IDS = IDS.slice(0, 17);

function element(rng: Rng, counter: { next: number }, clean: boolean): string {
  const space = () => rng.pick(SPACES);
  const members: string[] = [];
  if (clean) {
    members.push(`"jsonrpc"${space()}:${space()}"2.0"`, `"method":${space()}${rng.pick(METHODS.slice(0, 4))}`);
    if (rng.chance(0.9)) members.push(`"params":${space()}${rng.pick(PARAMS.slice(0, 12))}`);
    counter.next += 1;
    members.push(`"id":${space()}${rng.chance(0.75) ? String(counter.next) : rng.pick(CLEAN_IDS)}`);
    if (rng.chance(0.5)) members.reverse();
    return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`;
  }
  if (!rng.chance(0.03))
    members.push(`"jsonrpc"${space()}:${space()}${rng.chance(0.9) ? '"2.0"' : rng.pick(VERSIONS)}`);
  if (!rng.chance(0.03))
    members.push(`"method":${space()}${rng.chance(0.8) ? rng.pick(METHODS.slice(0, 4)) : rng.pick(METHODS)}`);
  if (rng.chance(0.9))
    members.push(`"params":${space()}${rng.chance(0.6) ? rng.pick(PARAMS.slice(0, 9)) : rng.pick(PARAMS)}`);
  if (rng.chance(0.95)) {
    counter.next += 1;
    members.push(`"id":${space()}${rng.chance(0.75) ? String(counter.next) : rng.pick(IDS)}`);
  }
  if (rng.chance(0.03)) members.push(`"extra":1`);
  if (rng.chance(0.03)) members.push(`"id":5`);
  if (rng.chance(0.02)) members.push(`"\\u0069d":5`);
  for (let k = members.length - 1; k > 0; k -= 1) {
    const j = rng.int(k + 1);
    [members[k], members[j]] = [members[j] as string, members[k] as string];
  }
  if (rng.chance(0.02)) return rng.pick(['1', '[]', '"x"', 'null', '{}']);
  return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`;
}

function batch(rng: Rng): string {
  const counter = { next: rng.int(3) };
  const size = 1 + rng.int(rng.chance(0.1) ? 60 : 8);
  const clean = rng.chance(0.5);
  const elements = Array.from({ length: size }, () => element(rng, counter, clean));
  const text = `${rng.pick(SPACES)}[${elements.join(`${rng.pick(SPACES)},`)}]${rng.pick(SPACES)}`;
  return clean ? text : damaged(rng, text);
}

/** A single request: one element, with spaces around it; damaged unless clean. */
function single(rng: Rng): string {
  const clean = rng.chance(0.5);
  const text = `${rng.pick(SPACES)}${element(rng, { next: rng.int(3) }, clean)}${rng.pick(SPACES)}`;
  return clean ? text : damaged(rng, text);
}

describe('readBatch and readSingle (the one-pass reader of common bodies)', () => {
  it('reads a batch as clients write it, with its plain ids', () => {
    const body = Buffer.from(
      '[{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000aa","latest"]},' +
        ' {"method":"eth_chainId","jsonrpc":"2.0","id":"b"}]',
    );
    assert.ok(assertSame(body, 'common'));
    const read = readBatch(body, MAX);
    assert.deepEqual(read?.plainIds, ['1', '"b"']);
    const first = read?.elements[0];
    assert.ok(first?.ok);
    assert.deepEqual(first.call.params, ['0x00000000000000000000000000000000000000aa', 'latest']);
  });

  it('leaves to the general reader what it would word or judge differently', () => {
    const left = [
      '[]',
      '[{"jsonrpc":"2.0","method":"a","id":1},]',
      '[{"jsonrpc":"2.0","method":"a","id":1,"id":2}]',
      '[{"jsonrpc":"2.0","method":"a","x":1}]',
      '[{"jsonrpc":"2\\u002e0","method":"a"}]',
      '[{"jsonrpc":"2.0","method":"\\u0061"}]',
      '[{"jsonrpc":"2.0","method":""}]',
      '[{"jsonrpc":"2.0","method":"a","params":"x"}]',
      '[{"jsonrpc":"2.0","method":"a","id":true}]',
      '[{"jsonrpc":"2.0","method":"a","id":01}]',
      '[1]',
      '{"jsonrpc":"2.0","method":"a"}',
      Buffer.from([0x5b, 0x7b, 0x22, 0xff, 0x22, 0x7d, 0x5d]).toString('latin1'),
    ];
    for (const text of left) assert.equal(readBatch(Buffer.from(text, 'latin1'), MAX), undefined, text);
    const tooMany = `[${Array.from({ length: MAX + 1 }, (_, k) => `{"jsonrpc":"2.0","method":"a","id":${k}}`)}]`;
    assert.equal(readBatch(Buffer.from(tooMany), MAX), undefined, 'over max_batch');
  });

  it('parseBody takes the one-pass reader for common batches and the general one otherwise', () => {
    const common = parseBody(Buffer.from('[{"jsonrpc":"2.0","method":"a","id":1}]'), MAX);
    assert.ok(common.batch);
    assert.deepEqual(common.plainIds, ['1']);
    const other = parseBody(Buffer.from('[{"jsonrpc":"2.0","method":"a","id":1,"x":0}]'), MAX);
    assert.ok(other.batch);
    assert.equal(other.plainIds, undefined);
  });

  it('reads a single request as clients write it; its bytes are the whole body', () => {
    const body = Buffer.from(
      ' {"jsonrpc":"2.0","id":"a","method":"eth_getBalance","params":["0x00000000000000000000000000000000000000aa","latest"]}\n',
    );
    assert.ok(assertSameSingle(body, 'common'));
    const read = readSingle(body);
    assert.ok(read?.ok);
    assert.equal(read.call.raw, body, 'the body itself, not a copy or a view');
    assert.deepEqual(read.call.id, { kind: 'string', start: 23, end: 26 }, 'offsets from the body’s first byte');
    assert.equal(read.call.idBytes.toString(), '"a"');
    // parseBody takes it: the one-pass reader's call is its own element.
    const parsed = parseBody(body, MAX);
    assert.ok(!parsed.batch && parsed.element.ok);
    assert.equal(parsed.element.call, parsed.element);
  });

  it('leaves to the general reader a single request it would word or judge differently', () => {
    const left = [
      '{}',
      '{"jsonrpc":"2.0","method":"a","id":1,"id":2}',
      '{"jsonrpc":"2.0","method":"a","x":1}',
      '{"jsonrpc":"2.0","method":"\\u0061"}',
      '{"jsonrpc":"2.0","method":"a","params":1}',
      '{"jsonrpc":"2.0","method":"a"} {}',
      '{"jsonrpc":"2.0","method":"a"}]',
      '{"jsonrpc":"2.0","method":"a"',
      '[{"jsonrpc":"2.0","method":"a"}]',
      Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]).toString('latin1'),
    ];
    for (const text of left) assert.equal(readSingle(Buffer.from(text, 'latin1')), undefined, text);
  });

  it('gives exactly the general reader’s calls on 3,000 generated and damaged batches', () => {
    seededRuns(batch, assertSame);
  });

  it('gives exactly the general reader’s call on 3,000 generated and damaged single requests', () => {
    seededRuns(single, assertSameSingle);
  });
});

/**
 * 3,000 bodies of the seed (SWITCHYARD_BATCH_SEED replays one) through `check`. Both readers must get real
 * work: most generated bodies are common, many are not.
 */
function seededRuns(generate: (rng: Rng) => string, check: (body: Buffer, label: string) => boolean): void {
  const seed = Number(process.env.SWITCHYARD_BATCH_SEED ?? 1);
  const rng = new Rng(seed);
  let taken = 0;
  const runs = 3000;
  for (let n = 0; n < runs; n += 1) {
    const text = generate(rng);
    if (check(Buffer.from(text), `seed ${seed} body ${n}: ${text.slice(0, 300)}`)) taken += 1;
  }
  assert.ok(taken > runs * 0.2 && taken < runs * 0.9, `one-pass reader took ${taken} of ${runs}`);
}
