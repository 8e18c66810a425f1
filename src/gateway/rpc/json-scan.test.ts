import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scanJson } from './json-scan.js';

const valid = [
  '0',
  '-0',
  '1e400',
  '12345678901234567890123',
  '-1.5E-7',
  '"a\\u00e9\\n\\"b"',
  'true',
  'false',
  'null',
  '[]',
  '{}',
  ' [ ] ',
  '[1,[2,[3,{"a":[{}]}]],"x"]',
  '{"a":1,"b":{"c":[true,false,null]},"d":"e"}',
  '{"id":18446744073709551615,"jsonrpc":"2.0"}',
  '[{"id":1},{"id":"two"}]',
  '"é€😀"',
  `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
];
const invalid = [
  '',
  ' ',
  '01',
  '1.',
  '.5',
  '-',
  '+1',
  '1e',
  '[1,]',
  '{"a":1,}',
  '{"a"}',
  '{"a":}',
  '{a:1}',
  "{'a':1}",
  '[1 2]',
  '"abc',
  '"a\\x"',
  '"\\u12g4"',
  '"tab\there"',
  'tru',
  'nul',
  'NaN',
  '[]]',
  '{}{}',
  '[',
  '{"a":1',
  '{"a":[1,2}',
  '[1}',
  '/* c */ 1',
];

describe('scanJson', () => {
  for (const text of valid) {
    it(`accepts ${text.slice(0, 40)}`, () => {
      assert.notEqual(scanJson(Buffer.from(text)), undefined);
      assert.doesNotThrow(() => JSON.parse(text));
    });
  }
  for (const text of invalid) {
    it(`rejects ${JSON.stringify(text)}`, () => {
      assert.equal(scanJson(Buffer.from(text)), undefined);
      assert.throws(() => JSON.parse(text));
    });
  }
  it('rejects every control character inside a string, and takes every other byte', () => {
    for (let c = 0; c < 0x100; c += 1) {
      // "a?b": a quote ends the string early; a backslash makes \b, a valid escape.
      const bytes = Buffer.from([0x22, 0x61, c, 0x62, 0x22]);
      const valid = c >= 0x20 && c !== 0x22;
      assert.equal(scanJson(bytes) !== undefined, valid, `byte 0x${c.toString(16)}`);
    }
  });

  it('reports top-level member spans as raw bytes', () => {
    const text = '{ "jsonrpc" : "2.0", "id" : 18446744073709551615 , "m\\u0065thod":"x", "p":{"id":2} }';
    const buf = Buffer.from(text);
    const scanned = scanJson(buf);
    assert.ok(scanned);
    assert.equal(scanned.kind, 'object');
    assert.deepEqual(
      scanned.members.map((m) => [m.key, m.value.kind, buf.subarray(m.value.start, m.value.end).toString()]),
      [
        ['jsonrpc', 'string', '"2.0"'],
        ['id', 'number', '18446744073709551615'],
        ['method', 'string', '"x"'],
        ['p', 'object', '{"id":2}'],
      ],
    );
  });

  it('reports top-level array elements', () => {
    const buf = Buffer.from(' [ {"id":1} , 2,"x" ,[3], {} ] ');
    const scanned = scanJson(buf);
    assert.ok(scanned);
    assert.deepEqual(
      scanned.elements.map((e) => [e.kind, buf.subarray(e.start, e.end).toString()]),
      [
        ['object', '{"id":1}'],
        ['number', '2'],
        ['string', '"x"'],
        ['array', '[3]'],
        ['object', '{}'],
      ],
    );
  });

  it('scans a sub-range of a buffer', () => {
    const buf = Buffer.from('xx{"id":"é"}yy');
    const scanned = scanJson(buf, 2, buf.length - 2);
    assert.ok(scanned);
    const id = scanned.members[0];
    assert.equal(buf.subarray(id?.value.start, id?.value.end).toString(), '"é"');
  });

  it('nested: reports the members of each object element, relative to the element, as a second scan would', () => {
    const bodies = [
      ' [ {"jsonrpc":"2.0","id":1,"method":"m","params":[{"a":[1,{}]},"x"]} , 7, [{"id":2}], {} ,{ "id" : "é" , "x":{"id":3}}]',
      '[{"id":18446744073709551615,"result":{"k":[]}},{"jsonrpc":"2.0","error":{"code":-1},"id":null}]',
      '[]',
      '[1,"a",null]',
    ];
    for (const text of bodies) {
      const buf = Buffer.from(text);
      const scanned = scanJson(buf, 0, buf.length, true);
      assert.ok(scanned, text);
      assert.deepEqual(scanned.elements, scanJson(buf)?.elements, text);
      assert.equal(scanned.elementMembers?.length, scanned.elements.length, text);
      scanned.elements.forEach((element, i) => {
        const raw = buf.subarray(element.start, element.end);
        const expected = element.kind === 'object' ? scanJson(raw)?.members : undefined;
        assert.deepEqual(scanned.elementMembers?.[i], expected, `${text} #${i}`);
      });
    }
    // Not an array, or invalid: as without the option.
    assert.equal(scanJson(Buffer.from('{"a":1}'), 0, 7, true)?.elementMembers, undefined);
    assert.equal(scanJson(Buffer.from('[{"a":1},]'), 0, 10, true), undefined);
  });

  it('agrees with JSON.parse on random mutations of a request', () => {
    const base =
      '{"jsonrpc":"2.0","id":[1,{"a":"b\\n"}],"method":"eth_call","params":[{"to":"0x1"},"latest",1.5e3,-0]}';
    let seed = 42;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const alphabet = '{}[]",:\\ 0123456789eE.-+abtrufnl';
    for (let round = 0; round < 3000; round += 1) {
      const chars = [...base];
      for (let k = 0; k <= rand(3); k += 1) chars[rand(chars.length)] = alphabet[rand(alphabet.length)] as string;
      const text = chars.join('');
      let parses = true;
      try {
        JSON.parse(text);
      } catch {
        parses = false;
      }
      assert.equal(scanJson(Buffer.from(text)) !== undefined, parses, text);
    }
  });
});
