import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../clock.js';
import { WriteAffinity } from './write-affinity.js';

describe('WriteAffinity (read-your-writes)', () => {
  it('sends a client back to the origin of its last write for the configured time, per network', () => {
    const clock = new ManualClock('2026-01-01T00:00:00.000Z');
    const writes = new WriteAffinity(clock, 60_000);
    writes.record('alice', 'sepolia', { poolId: 'p1', origin: 'a' });
    assert.deepEqual(writes.homeOf('alice', 'sepolia'), { poolId: 'p1', origin: 'a', until: clock.now() + 60_000 });
    assert.equal(writes.homeOf('alice', 'mainnet'), undefined);
    assert.equal(writes.homeOf('bob', 'sepolia'), undefined);
    writes.record('alice', 'sepolia', { poolId: 'p1', origin: 'b' });
    assert.equal(writes.homeOf('alice', 'sepolia')?.origin, 'b');
    clock.advance(59_999);
    assert.equal(writes.homeOf('alice', 'sepolia')?.origin, 'b');
    clock.advance(1);
    assert.equal(writes.homeOf('alice', 'sepolia'), undefined);
  });

  it('keeps at most maxEntries clients, dropping the oldest write first; 0 s turns it off', () => {
    const clock = new ManualClock('2026-01-01T00:00:00.000Z');
    const writes = new WriteAffinity(clock, 60_000, { maxEntries: 2 });
    writes.record('a', 'n', { poolId: 'p', origin: 'x' });
    writes.record('b', 'n', { poolId: 'p', origin: 'x' });
    writes.record('a', 'n', { poolId: 'p', origin: 'y' });
    writes.record('c', 'n', { poolId: 'p', origin: 'x' });
    assert.equal(writes.homeOf('b', 'n'), undefined);
    assert.equal(writes.homeOf('a', 'n')?.origin, 'y');
    const off = new WriteAffinity(clock, 0);
    off.record('a', 'n', { poolId: 'p', origin: 'x' });
    assert.equal(off.homeOf('a', 'n'), undefined);
  });
});
