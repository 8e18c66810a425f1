import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MISSING_DATA_TABLE, type MissingDataMatch, missingData } from './missing-data.js';

const H = '1a15e3c30cf094a99826869517b16d185d45831d3a494f01030b0001a9d3ebb9';

describe('missing-data table', () => {
  test('every row matches its own example, and no earlier row takes it', () => {
    for (const row of MISSING_DATA_TABLE) {
      const match = missingData({ code: row.codes[0] as number, message: row.example });
      assert.equal(match?.row, row.id, `${row.id}: ${row.example}`);
      assert.deepEqual(match?.clients, row.clients);
    }
  });

  test('row ids are unique and every row names its source', () => {
    const ids = MISSING_DATA_TABLE.map((row) => row.id);
    assert.equal(new Set(ids).size, ids.length);
    for (const row of MISSING_DATA_TABLE) assert.ok(row.source.length > 10 && row.clients.length > 0, row.id);
  });

  test('all six clients are covered', () => {
    const clients = new Set(MISSING_DATA_TABLE.flatMap((row) => row.clients));
    assert.deepEqual([...clients].sort(), ['anvil', 'besu', 'erigon', 'geth', 'nethermind', 'reth']);
  });
});

/** Real texts as each client builds them (see the row's `source`), with what the matcher must say. */
const POSITIVES: Array<[{ code?: number; message?: string }, Partial<MissingDataMatch>]> = [
  // geth
  [
    { code: -32000, message: `missing trie node ${H} (path ) <nil>` },
    { row: 'missing-trie-node', meaning: 'state' },
  ],
  [
    { code: -32000, message: `missing trie node ${H} (owner ${H}) (path 0a0b) layer stale` },
    { row: 'missing-trie-node', meaning: 'state' },
  ],
  [{ code: -32000, message: `historical state ${H} is not available` }, { meaning: 'state' }],
  [{ code: -32000, message: 'historical state not available in path scheme yet' }, { meaning: 'state' }],
  [
    { code: -32000, message: `state 0x${H} is not available` },
    { row: 'state-root-unavailable', meaning: 'state' },
  ],
  [{ code: -32000, message: `state 0x${H} is not available, not found` }, { meaning: 'state' }],
  [{ code: -32000, message: 'required historical state unavailable (reexec=128)' }, { meaning: 'state' }],
  [
    { code: 4444, message: 'pruned history unavailable' },
    { row: 'pruned-history-unavailable', meaning: 'history' },
  ],
  [
    { code: -32000, message: 'header not found' },
    { row: 'header-not-found', meaning: 'unknown-block' },
  ],
  [{ code: -32000, message: 'header for hash not found' }, { meaning: 'unknown-block' }],
  [{ code: -32000, message: 'finalized header not found' }, { meaning: 'unknown-block' }],
  [
    { code: -32000, message: 'safe block not found' },
    { row: 'block-not-found', meaning: 'unknown-block' },
  ],
  [
    { code: -32000, message: 'unknown block' },
    { row: 'unknown-block', meaning: 'unknown-block' },
  ],
  [{ code: -32602, message: 'block range extends beyond current head block' }, { meaning: 'unknown-block' }],
  // erigon
  [
    { code: -32000, message: 'old data not available due to pruning' },
    { row: 'erigon-pruned', meaning: 'state' },
  ],
  [
    {
      code: -32000,
      message:
        'old data not available due to pruning: requested block 6134861, history is available from block 7000000',
    },
    { meaning: 'state', requested: 6134861, earliestAvailable: 7000000 },
  ],
  [
    {
      code: -32000,
      message: 'old data not available due to pruning: requested block 5, blocks are available from block 100',
    },
    { meaning: 'history', requested: 5, earliestAvailable: 100 },
  ],
  [
    {
      code: -32000,
      message: 'old data not available due to pruning: block tx: 10, min tx: 20 last state history bn: 3',
    },
    { meaning: 'state', earliestAvailable: 3 },
  ],
  [{ code: -32000, message: 'history has been pruned for this block' }, { meaning: 'state' }],
  [
    { code: -32000, message: `block ${H} not found` },
    { row: 'block-id-not-found', meaning: 'unknown-block' },
  ],
  [
    { code: -32000, message: 'block 17000001 is not executed (last executed: 17000000)' },
    { meaning: 'unknown-block', requested: 17000001, head: 17000000 },
  ],
  [
    { code: -32000, message: 'block number is in the future latest=100 requested=101' },
    { meaning: 'unknown-block', requested: 101, head: 100 },
  ],
  [{ code: -32000, message: 'block not found' }, { row: 'block-not-found' }],
  // reth
  [
    { code: 4444, message: 'pruned history unavailable: requested 5, earliest available 100' },
    { meaning: 'history', requested: 5, earliestAvailable: 100 },
  ],
  [
    { code: -32603, message: 'block #5 is not available, history has expired (earliest available: #100)' },
    { row: 'reth-block-expired', meaning: 'history', requested: 5, earliestAvailable: 100 },
  ],
  [
    { code: -32603, message: 'state at block #17000000 is pruned' },
    { meaning: 'state', requested: 17000000 },
  ],
  [
    { code: -32001, message: 'block not found: 0x186a0' },
    { row: 'reth-block-not-found', meaning: 'unknown-block' },
  ],
  [{ code: -32001, message: `block not found: hash 0x${H}` }, { row: 'reth-block-not-found' }],
  [{ code: -32001, message: `block not found: canonical hash 0x${H}` }, { row: 'reth-block-not-found' }],
  [{ code: -32001, message: 'block not found: latest' }, { row: 'reth-block-not-found' }],
  [{ code: -32000, message: `block 0x${H} not found` }, { row: 'block-id-not-found' }],
  [
    { code: -32602, message: 'block range extends beyond current head block: requested 200, head 100' },
    { meaning: 'unknown-block', requested: 200, head: 100 },
  ],
  [
    { code: -32602, message: 'request beyond head block: requested 200, head 100' },
    { requested: 200, head: 100 },
  ],
  [
    {
      code: -32603,
      message: 'state at block #101 is not available, block has not been executed yet (latest executed: #100)',
    },
    { row: 'reth-not-executed', meaning: 'unknown-block', requested: 101, head: 100 },
  ],
  [{ code: -32001, message: 'unknown block number' }, { row: 'unknown-block' }],
  [{ code: -32603, message: `no state found for block 0x${H}` }, { row: 'reth-no-state-for-hash' }],
  // nethermind
  [
    { code: -32002, message: `No state available for block 17000000 (0x${H})` },
    { row: 'nethermind-no-state', meaning: 'state', requested: 17000000 },
  ],
  [
    { code: 4444, message: 'Pruned history unavailable for block 50' },
    { meaning: 'history', requested: 50 },
  ],
  [{ code: -39001, message: 'Unknown block error' }, { row: 'unknown-block' }],
  [{ code: -32001, message: '17000000 could not be found' }, { row: 'nethermind-could-not-be-found' }],
  [{ code: -32001, message: `0x${H} could not be found` }, { row: 'nethermind-could-not-be-found' }],
  [{ code: -32001, message: 'Finalized could not be found' }, { row: 'nethermind-could-not-be-found' }],
  // besu
  [{ code: 4444, message: 'Pruned history unavailable' }, { meaning: 'history' }],
  [{ code: -39001, message: 'Unknown block' }, { row: 'unknown-block' }],
  [{ code: -32000, message: 'Block not found' }, { row: 'block-not-found' }],
  [{ code: -32000, message: 'World state unavailable' }, { meaning: 'state' }],
  [{ code: -32008, message: 'Initial sync is still in progress' }, { meaning: 'unknown-block' }],
  // anvil (texts as anvil 1.7 answers them)
  [
    { code: -32602, message: 'BlockOutOfRangeError: block height is 16 but requested was 2' },
    { row: 'anvil-block-out-of-range', meaning: 'state', requested: 2, head: 16 },
  ],
  [
    { code: -32602, message: 'BlockOutOfRangeError: block height is 16 but requested was 100' },
    { meaning: 'unknown-block', requested: 100, head: 16 },
  ],
  [
    { code: -32001, message: 'Resource not found' },
    { row: 'anvil-resource-not-found', meaning: 'unknown-block' },
  ],
  [{ code: -32000, message: 'unknown block' }, { row: 'unknown-block' }],
  // EIP-4444 by code, whatever the text
  [
    { code: 4444, message: 'Cannot return pruned historical reward data before epoch block 100.' },
    { meaning: 'history' },
  ],
  [{ code: 4444 }, { row: 'eip-4444-code' }],
  // Text matches whatever code a proxy put on it, and surrounding whitespace is ignored.
  [{ code: -32603, message: '  missing trie node abc (path ) <nil>\n' }, { row: 'missing-trie-node' }],
  [{ message: 'header not found' }, { row: 'header-not-found' }],
];

describe('missingData matches the clients’ real texts', () => {
  for (const [error, expected] of POSITIVES) {
    test(`${error.code ?? '-'} ${error.message ?? '(no message)'}`, () => {
      const match = missingData(error);
      assert.ok(match, 'expected a match');
      for (const [key, value] of Object.entries(expected)) {
        assert.deepEqual(match[key as keyof MissingDataMatch], value, key);
      }
    });
  }

  test('numbers are absent when the message carries none', () => {
    const match = missingData({ code: -32000, message: 'header not found' });
    assert.deepEqual(match, { row: 'header-not-found', meaning: 'unknown-block', clients: ['geth', 'nethermind'] });
  });
});

/** Ordinary errors: none of them may ever count as missing data. */
const NEGATIVES: Array<{ code?: number; message?: string }> = [
  { code: 3, message: 'execution reverted' },
  { code: 3, message: 'execution reverted: header not found' },
  { code: -32000, message: 'execution reverted: missing trie node' },
  { code: -32000, message: 'execution reverted: old data not available due to pruning' },
  { code: 3, message: 'missing trie node' },
  { code: -32000, message: 'nonce too low' },
  { code: -32000, message: 'nonce too low: next nonce 5, tx nonce 4' },
  { code: -32003, message: 'nonce too high' },
  { code: -32000, message: 'insufficient funds for gas * price + value' },
  { code: -32000, message: 'insufficient funds for transfer' },
  { code: -32602, message: 'invalid argument 0: hex string without 0x prefix' },
  { code: -32602, message: 'invalid argument 1: hex number with leading zero digits' },
  { code: -32602, message: 'Invalid params' },
  { code: -32602, message: 'Invalid block param (block not found)' },
  { code: -32005, message: 'rate limit exceeded' },
  { code: -32005, message: 'limit exceeded' },
  { code: 429, message: 'Too Many Requests' },
  { code: -32005, message: 'daily request count exceeded, request rate limited' },
  { code: -32601, message: 'the method eth_foo does not exist/is not available' },
  { code: -32601, message: 'Method not found' },
  { code: -32000, message: 'pending state is not available' },
  { code: -32000, message: 'pending block is not available' },
  { code: -32000, message: 'transaction not found' },
  { code: -32001, message: 'transaction not found' },
  { code: -32000, message: 'filter not found' },
  { code: -32001, message: `0x${H} receipt could not be found` },
  { code: -32602, message: 'invalid block range params' },
  { code: -32005, message: 'query returned more than 10000 results' },
  { code: -32602, message: 'query exceeds max block range 10000' },
  { code: -32000, message: 'already known' },
  { code: -32000, message: 'replacement transaction underpriced' },
  { code: -32000, message: 'intrinsic gas too low' },
  { code: -32000, message: 'gas required exceeds allowance (30000000)' },
  { code: -32000, message: 'Resource not found' },
  { message: 'Resource not found' },
  { code: -32603, message: 'Internal error' },
  { code: -32000, message: 'header not found for the given filter, and more' },
  { code: -32000 },
  { code: -32000, message: '' },
  {},
  { code: -32000, message: `${'x'.repeat(1100)} missing trie node` },
];

describe('missingData leaves ordinary errors alone', () => {
  for (const error of NEGATIVES) {
    test(`${error.code ?? '-'} ${(error.message ?? '(no message)').slice(0, 60)}`, () => {
      assert.equal(missingData(error), undefined);
    });
  }
});
