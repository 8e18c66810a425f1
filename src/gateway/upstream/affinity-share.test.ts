import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../clock.js';
import type { RpcCall } from '../rpc/request.js';
import type { AffinityEntry, AffinityShare } from './affinity-share.js';
import { FilterAffinity } from './filter-affinity.js';
import { WriteAffinity } from './write-affinity.js';

/** The control process's relay as the workers see it: entries published are held until `deliver`. */
class Relay {
  readonly #listeners: Array<(entry: AffinityEntry) => void> = [];
  readonly #queued: AffinityEntry[] = [];

  share(): AffinityShare {
    return {
      publish: (entry) => this.#queued.push(entry),
      subscribe: (listener) => this.#listeners.push(listener),
    };
  }

  /** The first `count` queued entries (default all) to every process, the publisher included, in order. */
  deliver(count = this.#queued.length): void {
    for (const entry of this.#queued.splice(0, count)) for (const listener of this.#listeners) listener(entry);
  }
}

const call = (method: string, params: unknown[] = []) => ({ method, params }) as unknown as RpcCall;

describe('affinity shared between processes', () => {
  it("a write recorded by one process sends the client's reads to its origin in the other; a late echo of an older write changes nothing", () => {
    const clock = new ManualClock('2026-01-01T00:00:00.000Z');
    const relay = new Relay();
    const one = new WriteAffinity(clock, 60_000, { share: relay.share() });
    const two = new WriteAffinity(clock, 60_000, { share: relay.share() });
    one.record('alice', 'sepolia', { poolId: 'p', origin: 'a' });
    assert.equal(two.homeOf('alice', 'sepolia'), undefined, 'not before the relay delivers');
    relay.deliver();
    assert.equal(two.homeOf('alice', 'sepolia')?.origin, 'a');
    // A newer write on `two` while the older one's entry is still on its way back to `one`.
    one.record('alice', 'sepolia', { poolId: 'p', origin: 'a' });
    clock.advance(10);
    two.record('alice', 'sepolia', { poolId: 'p', origin: 'b' });
    relay.deliver(1);
    assert.equal(two.homeOf('alice', 'sepolia')?.origin, 'b', 'the older write arriving later is ignored');
    relay.deliver();
    assert.equal(one.homeOf('alice', 'sepolia')?.origin, 'b');
    assert.equal(two.homeOf('alice', 'sepolia')?.origin, 'b');
    // The shared entry ends when the write's own time is up, in every process.
    clock.advance(60_000);
    assert.equal(one.homeOf('alice', 'sepolia'), undefined);
    assert.equal(two.homeOf('alice', 'sepolia'), undefined);
  });

  it('a filter made through one process is found by the other; its uninstall there drops only that copy', () => {
    const clock = new ManualClock('2026-01-01T00:00:00.000Z');
    const relay = new Relay();
    const one = new FilterAffinity(clock, { share: relay.share() });
    const two = new FilterAffinity(clock, { share: relay.share() });
    one.record('sepolia', call('eth_newBlockFilter'), Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0xAB"}'), {
      pool: 'p',
      origin: 'b',
    });
    relay.deliver();
    assert.deepEqual(two.homeOf('sepolia', call('eth_getFilterChanges', ['0xab'])), { pool: 'p', origin: 'b' });
    assert.equal(two.homeOf('mainnet', call('eth_getFilterChanges', ['0xab'])), undefined);
    assert.deepEqual(two.homeOf('sepolia', call('eth_uninstallFilter', ['0xab'])), { pool: 'p', origin: 'b' });
    assert.equal(two.homeOf('sepolia', call('eth_getFilterChanges', ['0xab'])), undefined);
    assert.deepEqual(one.homeOf('sepolia', call('eth_getFilterChanges', ['0xab'])), { pool: 'p', origin: 'b' });
  });

  it('a filter polled through one process stays known to the others; its uses are shared once per half ttl', () => {
    const clock = new ManualClock('2026-01-01T00:00:00.000Z');
    const relay = new Relay();
    const published: AffinityEntry[] = [];
    const share = relay.share();
    const one = new FilterAffinity(clock, {
      ttlMs: 300_000,
      share: {
        publish: (entry) => {
          published.push(entry);
          share.publish(entry);
        },
        subscribe: share.subscribe,
      },
    });
    const two = new FilterAffinity(clock, { ttlMs: 300_000, share: relay.share() });
    one.record('sepolia', call('eth_newFilter', [{}]), Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x1"}'), {
      pool: 'p',
      origin: 'b',
    });
    relay.deliver();
    const poll = call('eth_getFilterChanges', ['0x1']);
    // Polled through `one` every minute for 12 minutes: `two` never saw a poll, and still knows it.
    for (let minute = 1; minute <= 12; minute += 1) {
      clock.advance(60_000);
      assert.deepEqual(one.homeOf('sepolia', poll), { pool: 'p', origin: 'b' });
      relay.deliver();
    }
    assert.deepEqual(two.homeOf('sepolia', poll), { pool: 'p', origin: 'b' }, 'known 12 minutes on');
    // The creation, then a use shared at minutes 3, 6, 9 and 12 (each 2.5 minutes or more past the last).
    assert.equal(published.length, 5);
    // Unused for 5 minutes anywhere, it is gone everywhere.
    clock.advance(300_000);
    assert.equal(one.homeOf('sepolia', poll), undefined);
  });
});
