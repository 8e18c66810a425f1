import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../../../test/helpers/seeded-rng.js';
import { ByteLru, ENTRY_OVERHEAD_BYTES } from './lru.js';

const value = (bytes: number) => ({ bytes });

test('evicts least recently used entries once the byte budget is exceeded', () => {
  const cost = ByteLru.cost('a', value(100));
  const lru = new ByteLru<{ bytes: number }>({ maxBytes: cost * 3 });
  lru.set('a', value(100));
  lru.set('b', value(100));
  lru.set('c', value(100));
  assert.equal(lru.bytes, cost * 3);
  lru.get('a'); // a is now the most recently used; b is the coldest
  lru.set('d', value(100));
  assert.deepEqual(
    ['a', 'b', 'c', 'd'].map((k) => lru.has(k)),
    [true, false, true, true],
  );
  assert.equal(lru.evictions, 1);
  assert.ok(lru.bytes <= lru.maxBytes);
});

test('one large entry evicts as many small ones as its size needs', () => {
  const evicted: string[] = [];
  const lru = new ByteLru<{ bytes: number }>({ maxBytes: 10_000, onEvict: (key) => evicted.push(key) });
  for (let i = 0; i < 10; i++) lru.set(`k${i}`, value(500));
  lru.set('big', value(6_000));
  assert.ok(lru.has('big'));
  assert.ok(lru.bytes <= 10_000);
  // Exactly as many of the oldest as needed to fit the big one, and no more.
  const small = ByteLru.cost('k0', value(500));
  const need = Math.ceil((10 * small + ByteLru.cost('big', value(6_000)) - 10_000) / small);
  assert.equal(need, 5);
  assert.deepEqual(evicted, ['k0', 'k1', 'k2', 'k3', 'k4']);
});

test('an entry above maxEntryBytes is refused and does not disturb the cache', () => {
  const lru = new ByteLru<{ bytes: number }>({ maxBytes: 10_000, maxEntryBytes: 1_000 });
  lru.set('small', value(100));
  assert.equal(lru.set('huge', value(1_000 - ENTRY_OVERHEAD_BYTES)), false);
  assert.equal(lru.has('huge'), false);
  assert.equal(lru.has('small'), true);
});

test('replacing a key accounts its bytes once', () => {
  const lru = new ByteLru<{ bytes: number }>({ maxBytes: 100_000 });
  lru.set('a', value(100));
  lru.set('a', value(300));
  assert.equal(lru.size, 1);
  assert.equal(lru.bytes, ByteLru.cost('a', value(300)));
  lru.delete('a');
  assert.equal(lru.bytes, 0);
});

test('approximate recency: an entry is evicted only after a quarter of the entries were used after it', () => {
  // Seeded pseudo-random gets and sets over a key space larger than the cache, checked against a log of
  // uses: when a key is evicted, count the distinct keys used after its last use.
  const rng = new Rng(42);
  const cost = ByteLru.cost('k00', value(10));
  const uses: string[] = [];
  let checked = 0;
  const lru = new ByteLru<{ bytes: number }>({
    maxBytes: cost * 40,
    onEvict: (key) => {
      const last = uses.lastIndexOf(key);
      const after = new Set(uses.slice(last + 1));
      after.delete(key);
      assert.ok(after.size >= Math.floor(40 / 4), `${key} evicted after only ${after.size} other keys were used`);
      checked += 1;
    },
  });
  for (let i = 0; i < 5_000; i++) {
    const key = `k${String(rng.int(60)).padStart(2, '0')}`;
    if (lru.get(key) === undefined) lru.set(key, value(10));
    uses.push(key);
  }
  assert.ok(checked > 100, `only ${checked} evictions were checked`);
});

test('a hit in the recent half is not moved, one in the cold half is', () => {
  const cost = ByteLru.cost('a', value(1));
  const lru = new ByteLru<{ bytes: number }>({ maxBytes: cost * 4 });
  for (const key of ['a', 'b', 'c', 'd']) lru.set(key, value(1));
  lru.get('d'); // newest: stays where it is (it is already the most recent)
  lru.get('a'); // oldest: moved to the recent end, so b is now the coldest
  lru.set('e', value(1));
  assert.deepEqual(
    ['a', 'b', 'c', 'd', 'e'].map((k) => lru.has(k)),
    [true, false, true, true, true],
  );
});
