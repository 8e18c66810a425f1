import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type BlockTransaction, NetworkLedger } from './network-ledger.js';
import type { Followed } from './types.js';

const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const SENDER = `0x${'a'.repeat(40)}`;

function followed(n: number, extra: Partial<Followed> = {}): Followed {
  return {
    network: 'net',
    hash: hash(n),
    from: SENDER,
    nonce: n,
    keyId: null,
    accountId: 'acct',
    firstSeen: n,
    status: 'pending',
    version: 0,
    inclusion: undefined,
    rebroadcasts: 0,
    absentSince: undefined,
    checkAt: 1_000 + n,
    ...extra,
  };
}

const tx = (n: number, nonce = n, index = 0): BlockTransaction => ({ hash: hash(n), from: SENDER, nonce, index });

describe('NetworkLedger', () => {
  it('names the records a block includes and the pending ones of the same sender and nonce it replaces', () => {
    const ledger = new NetworkLedger();
    const mine = followed(1);
    const rival = followed(2, { nonce: 1 });
    const other = followed(3);
    for (const record of [mine, rival, other]) ledger.follow(record, 10);
    const matches = ledger.match([tx(1, 1, 4), tx(99, 50)], { number: 7, hash: hash(700) });
    assert.deepEqual(
      matches.included.map(({ record, inclusion }) => [record.hash, inclusion]),
      [[mine.hash, { number: 7, hash: hash(700), index: 4 }]],
    );
    assert.deepEqual(
      matches.replaced.map(({ record, by }) => [record.hash, by]),
      [[rival.hash, hash(1)]],
    );
  });

  it('finality takes the lowest blocks, a reorg the highest; each record leaves once', () => {
    const ledger = new NetworkLedger();
    const records = [5, 6, 7].map((n) => followed(n));
    for (const record of records) ledger.follow(record, 10);
    for (const [i, record] of records.entries()) {
      ledger.include(record, { number: 10 + i, hash: hash(100 + i), index: 0 });
    }
    assert.equal(ledger.pendingCount, 0);
    assert.equal(ledger.includedCount, 3);
    assert.deepEqual(
      ledger.includedFrom(11).map((record) => record.hash),
      [hash(7), hash(6)],
    );
    assert.deepEqual(
      ledger.takeFinal(10).map((record) => record.hash),
      [hash(5)],
    );
    assert.deepEqual(ledger.takeFinal(10), []);
    assert.equal(ledger.get(hash(5)), undefined);
    ledger.reorg(records[2] as Followed, 5_000);
    assert.equal(ledger.pendingCount, 1);
    assert.deepEqual(
      ledger.takeFinal(100).map((record) => record.hash),
      [hash(6)],
    );
    assert.equal(ledger.get(hash(7))?.status, 'pending');
  });

  it('keeps at most max_pending pending records: the oldest followed leave first', () => {
    const ledger = new NetworkLedger();
    assert.deepEqual(ledger.follow(followed(1), 2), []);
    assert.deepEqual(ledger.follow(followed(2), 2), []);
    const evicted = ledger.follow(followed(3), 2);
    assert.deepEqual(
      evicted.map((record) => record.hash),
      [hash(1)],
    );
    assert.equal(ledger.get(hash(1)), undefined);
    assert.equal(ledger.pendingCount, 2);
  });

  it('hands out due mempool checks in order, skipping entries a reschedule replaced', () => {
    const ledger = new NetworkLedger();
    const a = followed(1, { checkAt: 100 });
    const b = followed(2, { checkAt: 200 });
    ledger.follow(a, 10);
    ledger.follow(b, 10);
    assert.deepEqual(ledger.dueChecks(50, 10), []);
    ledger.schedule(a, 300);
    assert.deepEqual(
      ledger.dueChecks(250, 10).map((record) => record.hash),
      [b.hash],
    );
    assert.deepEqual(
      ledger.dueChecks(400, 10).map((record) => record.hash),
      [a.hash],
    );
  });
});
