import assert from 'node:assert/strict';
import { test } from 'node:test';
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
