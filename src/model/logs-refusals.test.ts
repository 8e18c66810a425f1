import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOGS_REFUSALS, logsRefusal } from './logs-refusals.js';

describe("origins' eth_getLogs size refusals", () => {
  it('every row matches its own message, in any case', () => {
    for (const row of LOGS_REFUSALS) {
      assert.equal(logsRefusal({ message: `Error: ${row.message.toUpperCase()} 10000` }), row, row.message);
    }
  });

  it("the origins' own wording as they send it", () => {
    const cases: Array<[string, string]> = [
      ['exceed maximum block range 1000', 'geth'],
      ['query exceeds max block range 100000', 'reth'],
      ['query exceeds max results 20000, retry with the range 24383075-24383096', 'reth'],
      ['Requested range exceeds maximum RPC range limit', 'besu'],
      ['query returned more than 10000 results. Try with this block range [0x10, 0x2a].', 'Infura'],
      [
        'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size',
        'Alchemy',
      ],
      ['eth_getLogs is limited to a 10,000 range', 'QuickNode'],
      ['block range is too wide', 'Ankr'],
      ['ranges over 10000 blocks are not supported on freetier', 'dRPC'],
    ];
    for (const [message, origin] of cases) assert.equal(logsRefusal({ message })?.origin, origin, message);
  });

  it('other errors of eth_getLogs are not size refusals', () => {
    for (const message of [
      'invalid block range params',
      'block range extends beyond current head block',
      'header not found',
      'daily request count exceeded, request rate limited',
      'execution reverted',
    ]) {
      assert.equal(logsRefusal({ message }), undefined, message);
    }
    assert.equal(logsRefusal({}), undefined);
    assert.equal(logsRefusal({ message: 42 }), undefined);
  });
});
