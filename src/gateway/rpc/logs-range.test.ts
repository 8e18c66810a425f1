import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSwitchyardError } from '../../errors/base.js';
import { logsRangeRefusal } from './logs-range.js';

const HASH = `0x${'cd'.repeat(32)}`;
/** A chain view whose network head is `n`. */
const head = (n: number | undefined) => ({ networkHead: () => n });

describe('eth_getLogs range guard', () => {
  it('lets a range of exactly the limit through and refuses one block more, naming the limit and a split', () => {
    assert.equal(
      logsRangeRefusal('sepolia', 'eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2710' }], 10_000, head(0x5000)),
      undefined,
    );
    const refusal = logsRangeRefusal(
      'sepolia',
      'eth_getLogs',
      [{ fromBlock: '0x1', toBlock: '0x2711' }],
      10_000,
      head(0x5000),
    );
    assert.ok(isSwitchyardError(refusal));
    assert.equal(refusal.code, 'LOGS_RANGE_TOO_LARGE');
    assert.match(refusal.message, /spans 10001 blocks/);
    assert.match(refusal.message, /at most 10000/);
    assert.match(refusal.message, /networks\.sepolia\.max_logs_block_range/);
    assert.match(refusal.message, /fromBlock 0x1 toBlock 0x2710, then fromBlock 0x2711/);
    assert.deepEqual(refusal.details, {
      method: 'eth_getLogs',
      from_block: '0x1',
      to_block: '0x2711',
      blocks: 10001,
      limit: 10_000,
    });
  });

  it('resolves tags and absent bounds to the network head, without clamping', () => {
    assert.equal(logsRangeRefusal('n', 'eth_getLogs', [{ fromBlock: '0x0' }], 100, head(99)), undefined);
    assert.ok(logsRangeRefusal('n', 'eth_getLogs', [{ fromBlock: '0x0' }], 100, head(100)));
    assert.ok(logsRangeRefusal('n', 'eth_getLogs', [{ fromBlock: 'earliest', toBlock: 'latest' }], 100, head(500)));
    // toBlock past the head counts as written
    assert.ok(logsRangeRefusal('n', 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x1000' }], 100, head(5)));
  });

  it('covers eth_newFilter too, and nothing else', () => {
    assert.ok(logsRangeRefusal('n', 'eth_newFilter', [{ fromBlock: '0x0', toBlock: '0x100' }], 10, head(0)));
    assert.equal(logsRangeRefusal('n', 'eth_getBalance', ['0x01', '0x100'], 10, head(0)), undefined);
  });

  it('passes blockHash filters, reversed ranges, unresolvable tags, and everything when off (null)', () => {
    assert.equal(logsRangeRefusal('n', 'eth_getLogs', [{ blockHash: HASH }], 1, head(100)), undefined);
    assert.equal(
      logsRangeRefusal('n', 'eth_getLogs', [{ fromBlock: '0x100', toBlock: '0x1' }], 1, head(1000)),
      undefined,
    );
    assert.equal(logsRangeRefusal('n', 'eth_getLogs', [{ fromBlock: '0x0' }], 1, head(undefined)), undefined);
    assert.equal(
      logsRangeRefusal('n', 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x100000' }], null, head(5)),
      undefined,
    );
  });
});
