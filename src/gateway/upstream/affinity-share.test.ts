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
});
