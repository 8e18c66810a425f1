import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasControlCharacters, oneLine, plainText } from './plain-text.js';

test('control characters: C0 (tab included), DEL, C1 and the Unicode line separators', () => {
  for (const code of [0x00, 0x09, 0x0a, 0x0d, 0x1b, 0x1f, 0x7f, 0x80, 0x85, 0x9f, 0x2028, 0x2029]) {
    const value = `a${String.fromCharCode(code)}b`;
    assert.ok(hasControlCharacters(value), `U+${code.toString(16)}`);
    assert.equal(plainText().safeParse(value).success, false);
  }
  for (const value of ['', 'plain name', 'über-pool ✓', 'a\u00a0b', 'emoji 🚀', 'quote "x" <y>']) {
    assert.equal(hasControlCharacters(value), false, value);
    assert.equal(plainText().safeParse(value).success, true);
  }
});

test('oneLine escapes each control character as \\uXXXX and leaves other text alone', () => {
  assert.equal(oneLine('a\r\nb\u0000c\u2028'), 'a\\u000d\\u000ab\\u0000c\\u2028');
  assert.equal(oneLine('über 🚀'), 'über 🚀');
});
