/**
 * eth_getLogs checks over the recorded Osaka-era block (four logs in one receipt): block hashes against
 * the trusted chain, and the exact set of matching logs against the block's proven receipts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fixtures from '../../test/fixtures/verify/execution-apis.json' with { type: 'json' };
import { proveHeader } from './header.js';
import { bloomMayMatch, checkLogBlocks, logMatchesFilter, proveLogs } from './logs.js';
import { type ProvenBlockReceipts, proveBlockReceipts } from './receipts.js';

type Json = Record<string, unknown>;
const block = fixtures.blocks.osaka.result;
const receipts = fixtures.blockReceipts.osaka.result as Json[];
const allLogs = receipts.flatMap((receipt) => receipt.logs as Json[]);
const header = proveHeader(block);
const trusted = new Map([[BigInt(block.number), block.hash]]);

async function provenBlocks(): Promise<Map<string, ProvenBlockReceipts>> {
  return new Map([[block.hash.toLowerCase(), await proveBlockReceipts(receipts, header)]]);
}

describe('logs', () => {
  test('logs on the trusted chain pass; heights without a trusted hash are returned, not passed', async () => {
    const result = await checkLogBlocks(allLogs, trusted);
    assert.ok(result.ok);
    assert.deepEqual(result.value.unknownBlocks, []);
    const moved = allLogs.map((log) => ({ ...log, blockNumber: '0x35' }));
    const unknown = await checkLogBlocks(moved, trusted);
    assert.ok(unknown.ok);
    assert.deepEqual(unknown.value.unknownBlocks, [0x35n]);
  });

  test('a log naming another block at a trusted height, or no block, fails', async () => {
    const forged = allLogs.map((log, i) => (i === 2 ? { ...log, blockHash: fixtures.blocks.prague.result.hash } : log));
    const result = await checkLogBlocks(forged, trusted);
    assert.equal(!result.ok && result.failure.check, 'log');
    const { blockHash: _dropped, ...anonymous } = allLogs[0] as Json;
    const none = await checkLogBlocks([anonymous], trusted);
    assert.equal(!none.ok && none.failure.check, 'log');
  });

  test('the honest answer to a filter is exactly the matching proven logs', async () => {
    const topic = ((allLogs[1] as Json).topics as string[])[0] as string;
    const filter = { topics: [[topic]] };
    const matching = allLogs.filter((log) => logMatchesFilter(log as never, filter));
    assert.equal(matching.length, 1);
    assert.ok((await proveLogs(matching, filter, await provenBlocks())).ok);
    assert.ok((await proveLogs(allLogs, {}, await provenBlocks())).ok);
    assert.ok(bloomMayMatch(block.logsBloom, filter));
    assert.equal(bloomMayMatch(block.logsBloom, { topics: [[`0x${'00'.repeat(31)}01`]] }), false);
  });

  test('an altered, invented, reordered or left-out log fails', async () => {
    const blocks = await provenBlocks();
    const lies: [string, Json[]][] = [
      ['data', allLogs.map((log, i) => (i === 1 ? { ...log, data: `0x${'00'.repeat(32)}` } : log))],
      ['left out', allLogs.slice(1)],
      ['invented', [...allLogs, { ...(allLogs[0] as Json), logIndex: '0x9' }]],
      ['reordered', [allLogs[1], allLogs[0], ...allLogs.slice(2)] as Json[]],
      ['transaction', allLogs.map((log, i) => (i === 0 ? { ...log, transactionHash: `0x${'00'.repeat(32)}` } : log))],
      ['removed', allLogs.map((log, i) => (i === 0 ? { ...log, removed: true } : log))],
    ];
    for (const [what, answer] of lies) {
      const result = await proveLogs(answer, {}, blocks);
      assert.equal(!result.ok && result.failure.check, 'log', what);
    }
    const elsewhere = allLogs.map((log) => ({ ...log, blockHash: fixtures.blocks.prague.result.hash }));
    const result = await proveLogs(elsewhere, {}, blocks);
    assert.equal(!result.ok && result.failure.check, 'log');
  });
});
