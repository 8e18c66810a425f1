import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  formatKey,
  generateKey,
  KeyMismatchError,
  keyIdOf,
  parseKey,
  SealedValueError,
  SecretBox,
  sealedKeyId,
} from './secret-box.js';

test('a sealed value opens only with its key and its context, and never shows the plain text', () => {
  const box = new SecretBox(generateKey());
  const sealed = box.seal('user:PASS@node', 'pools/1');
  assert.ok(!sealed.includes('PASS'));
  assert.match(sealed, /^sy1:[0-9a-f]{16}:[A-Za-z0-9_-]+$/);
  assert.equal(sealedKeyId(sealed), box.keyId);
  assert.equal(box.open(sealed, 'pools/1'), 'user:PASS@node');
  assert.notEqual(box.seal('user:PASS@node', 'pools/1'), sealed, 'a fresh nonce per value');
  assert.throws(() => box.open(sealed, 'pools/2'), SealedValueError, 'moved to another row');
  const other = new SecretBox(generateKey());
  assert.throws(() => other.open(sealed, 'pools/1'), KeyMismatchError);
  // Another key id written into the value: the key id is authenticated too.
  const relabelled = sealed.replace(box.keyId, other.keyId);
  assert.throws(() => other.open(relabelled, 'pools/1'), SealedValueError);
  const raw = Buffer.from(sealed.split(':')[2] as string, 'base64url');
  raw[20] = (raw[20] as number) ^ 1;
  assert.throws(() => box.open(`sy1:${box.keyId}:${raw.toString('base64url')}`, 'pools/1'), SealedValueError);
  assert.throws(() => box.open('plain text', 'pools/1'), SealedValueError);
});

test('a key is 32 bytes as 64 hex characters or base64; anything else says what is wanted', () => {
  const key = generateKey();
  for (const text of [
    formatKey(key),
    key.toString('hex').toUpperCase(),
    key.toString('base64'),
    `${key.toString('base64url')}\n`,
  ]) {
    const parsed = parseKey(text);
    assert.ok('key' in parsed, text);
    assert.equal(keyIdOf(parsed.key), keyIdOf(key));
  }
  for (const text of ['', '  \n', 'abc', key.toString('hex').slice(2), Buffer.alloc(31).toString('base64')]) {
    const parsed = parseKey(text);
    assert.ok('problem' in parsed, JSON.stringify(text));
    assert.match(parsed.problem, /32-byte key written as 64 hex characters or base64/);
  }
  assert.notEqual(keyIdOf(generateKey()), keyIdOf(key));
});
