import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateKey, SecretBox } from '../store/secret-box.js';
import { DecodedPoolMemo, type OnCorruptPool, type PoolRow } from './pool-rows.js';

const box = new SecretBox(generateKey());

function row(id: string, overrides: Partial<PoolRow> = {}): PoolRow {
  return {
    id,
    account_id: 'f'.repeat(32),
    name: `pool-${id}`,
    notification_email: '',
    monitor_id: null,
    enabled: 1,
    settings: JSON.stringify({ origins: [{ name: 'o', address: '127.0.0.1:8545' }] }),
    created_on: '2026-01-01T00:00:00.000Z',
    modified_on: '2026-01-01T00:00:00.000Z',
    version: 1,
    ...overrides,
  };
}

test('an unchanged stamp gives back the very same Pool; a new version or modified_on decodes the row again', () => {
  const memo = new DecodedPoolMemo();
  const [first] = memo.rowsToPools([row('1')], box, undefined);
  const [again] = memo.rowsToPools([row('1')], box, undefined);
  assert.ok(first !== undefined);
  assert.equal(again, first);
  assert.equal(memo.get(row('1')), first);
  assert.equal(
    memo.get({ id: '1', version: '1', modified_on: row('1').modified_on }),
    first,
    'a string version (PostgreSQL)',
  );
  for (const changed of [
    { version: 2 },
    { version: '2' },
    { modified_on: '2026-01-02T00:00:00.000Z' },
  ] satisfies Partial<PoolRow>[]) {
    assert.equal(memo.get(row('1', changed)), undefined, JSON.stringify(changed));
  }
  const [next] = memo.rowsToPools([row('1', { version: 2, notification_email: 'ops@example.com' })], box, undefined);
  assert.notEqual(next, first);
  assert.equal(next?.notification_email, 'ops@example.com');
  assert.equal(memo.get(row('1')), undefined, 'the old version is gone');
});

test('an undecodable row is reported and never remembered', () => {
  const memo = new DecodedPoolMemo();
  memo.rowsToPools([row('1')], box, undefined);
  const corrupt: Parameters<OnCorruptPool>[0][] = [];
  const pools = memo.rowsToPools([row('1', { settings: '{}', version: 2 }), row('2')], box, (c) => corrupt.push(c));
  assert.deepEqual(
    pools.map((pool) => pool.id),
    ['2'],
  );
  assert.equal(corrupt.length, 1);
  assert.equal(corrupt[0]?.pool_id, '1');
  assert.equal(memo.get(row('1')), undefined);
  assert.equal(memo.get(row('1', { settings: '{}', version: 2 })), undefined);
});

test('the memo keeps at most maxEntries rows, dropping those seen longest ago', () => {
  const memo = new DecodedPoolMemo(3);
  memo.rowsToPools([row('1'), row('2'), row('3')], box, undefined);
  memo.get(row('1'));
  memo.rowsToPools([row('4')], box, undefined);
  assert.equal(memo.size, 3);
  assert.equal(memo.get(row('2')), undefined, 'seen longest ago');
  assert.notEqual(memo.get(row('1')), undefined);
  assert.notEqual(memo.get(row('4')), undefined);
});
