/**
 * Header hashes recomputed from recorded go-ethereum answers (test/fixtures/verify/execution-apis.json:
 * the execution-apis test chain, one block of each header layout), and refused when any field is off by
 * one byte, when the layout has a gap, or when the hash is not the trusted one.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fixtures from '../../test/fixtures/verify/execution-apis.json' with { type: 'json' };
import { alteredHeaders } from '../../test/helpers/verify-lies.js';
import type { Verified } from './failure.js';
import { verifyHeader } from './header.js';

type Block = Record<string, unknown>;
const blocks = Object.fromEntries(Object.entries(fixtures.blocks).map(([name, one]) => [name, one.result as Block]));

const EXPECTED_LAYOUT: Record<string, string> = {
  genesis: 'legacy',
  legacy: 'legacy',
  london: 'london',
  paris: 'london',
  shanghai: 'shanghai',
  cancun: 'cancun',
  prague: 'prague',
  osaka: 'prague',
};

function failureOf<T>(result: Verified<T>) {
  assert.equal(result.ok, false, 'the check should have failed');
  return result.ok ? undefined : result.failure;
}

describe('header hash', () => {
  for (const [name, block] of Object.entries(blocks)) {
    test(`the recorded ${name} block recomputes to its hash (${EXPECTED_LAYOUT[name]} layout)`, async () => {
      const result = await verifyHeader(block, { hash: block.hash as string, number: BigInt(block.number as string) });
      assert.ok(result.ok, JSON.stringify(!result.ok && result.failure));
      assert.equal(result.value.layout, EXPECTED_LAYOUT[name]);
      assert.equal(result.value.stateRoot, block.stateRoot);
    });

    test(`every field of the ${name} block altered by one byte fails`, async () => {
      for (const [field, altered] of alteredHeaders(block)) {
        const failure = failureOf(await verifyHeader(altered));
        assert.equal(failure?.check, 'header-hash', `${field}: ${failure?.reason}`);
      }
    });
  }

  test('a hash other than the trusted one fails, and so does another height', async () => {
    const block = blocks.prague as Block;
    const otherHash = (blocks.cancun as Block).hash as string;
    assert.equal(failureOf(await verifyHeader(block, { hash: otherHash }))?.check, 'header-hash');
    assert.equal(failureOf(await verifyHeader(block, { number: 7n }))?.check, 'header-hash');
  });

  test('a self-consistent forged block (hash field recomputed) still fails against the trusted hash', async () => {
    const block = blocks.shanghai as Block;
    const forged = { ...block, stateRoot: `0x${'11'.repeat(32)}` };
    const own = await verifyHeader(forged);
    const failure = failureOf(own);
    assert.match(failure?.reason ?? '', /hash to (0x[0-9a-f]{64})/);
    const recomputed = /hash to (0x[0-9a-f]{64})/.exec(failure?.reason ?? '')?.[1] as string;
    const selfConsistent = { ...forged, hash: recomputed };
    assert.ok((await verifyHeader(selfConsistent)).ok, 'without an anchor a forged block is only self-consistent');
    assert.equal(failureOf(await verifyHeader(selfConsistent, { hash: block.hash as string }))?.check, 'header-hash');
  });

  test('fields out of layout order are refused, not hashed', async () => {
    const cancun = blocks.cancun as Block;
    const { baseFeePerGas: _dropped, ...noBaseFee } = cancun;
    assert.equal(failureOf(await verifyHeader(noBaseFee))?.check, 'header-layout');
    const { excessBlobGas: _half, ...halfCancun } = cancun;
    assert.equal(failureOf(await verifyHeader(halfCancun))?.check, 'header-layout');
    const later = { ...(blocks.prague as Block), blockAccessListHash: `0x${'00'.repeat(32)}` };
    assert.equal(failureOf(await verifyHeader(later))?.check, 'header-layout');
  });

  test('a field that is not the right hex is refused as the answer shape', async () => {
    for (const [field, value] of [
      ['stateRoot', '0x1234'],
      ['number', 'twelve'],
      ['logsBloom', undefined],
    ] as const) {
      const failure = failureOf(await verifyHeader({ ...(blocks.london as Block), [field]: value }));
      assert.equal(failure?.check, 'answer-shape');
      assert.match(failure?.reason ?? '', new RegExp(field));
    }
    assert.equal(failureOf(await verifyHeader(null))?.check, 'answer-shape');
  });
});
