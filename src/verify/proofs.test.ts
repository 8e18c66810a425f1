/**
 * eth_getProof verification on a recorded go-ethereum proof (an account with code and storage, at the
 * recorded chain's head): the honest proof verifies; every way of lying about it is refused. The live
 * cases (absent accounts, unset slots, code) are in test/verify/proofs.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fixtures from '../../test/fixtures/verify/execution-apis.json' with { type: 'json' };
import { flippedNode } from '../../test/helpers/verify-lies.js';
import type { Verified } from './failure.js';
import { EMPTY_CODE_HASH, EMPTY_STORAGE_HASH, storageSlotKey, verifyAccountProof } from './proofs.js';

type Proof = typeof fixtures.proofs.accountWithStorage.result;
const STATE_ROOT = fixtures.blocks.osaka.result.stateRoot;
const honest = fixtures.proofs.accountWithStorage.result;
const ADDRESS = honest.address;

function failureOf<T>(result: Verified<T>) {
  assert.equal(result.ok, false, 'the check should have failed');
  return result.ok ? undefined : result.failure;
}

const storageProof = (change: (entry: Proof['storageProof'][number]) => Proof['storageProof'][number]): Proof => ({
  ...honest,
  storageProof: honest.storageProof.map((entry) => change({ ...entry })),
});

describe('account and storage proofs (recorded)', () => {
  test('the honest proof verifies the account and its slot', async () => {
    const result = await verifyAccountProof(STATE_ROOT, ADDRESS, honest, ['0x00']);
    assert.ok(result.ok, JSON.stringify(!result.ok && result.failure));
    assert.equal(result.value.exists, true);
    assert.equal(result.value.balance, BigInt(honest.balance));
    assert.equal(result.value.storage.get(storageSlotKey('0x0')), BigInt(honest.storageProof[0]?.value as string));
  });

  test('a claimed value changed without the trie nodes is refused', async () => {
    for (const field of ['balance', 'nonce'] as const) {
      const lie = { ...honest, [field]: `0x${(BigInt(honest[field]) + 1n).toString(16)}` };
      assert.equal(failureOf(await verifyAccountProof(STATE_ROOT, ADDRESS, lie))?.check, 'account-proof', field);
    }
    for (const field of ['codeHash', 'storageHash'] as const) {
      const lie = { ...honest, [field]: `0x${'00'.repeat(32)}` };
      assert.equal(failureOf(await verifyAccountProof(STATE_ROOT, ADDRESS, lie))?.check, 'account-proof', field);
    }
    const slotLie = storageProof((entry) => ({ ...entry, value: '0x39' }));
    assert.equal(failureOf(await verifyAccountProof(STATE_ROOT, ADDRESS, slotLie, ['0x0']))?.check, 'storage-proof');
  });

  test('changed, dropped, swapped or foreign trie nodes are refused', async () => {
    const nodes = honest.accountProof;
    const lies: [string, string[]][] = [
      ['leaf edited', [...nodes.slice(0, -1), flippedNode(nodes.at(-1) as string)]],
      ['root edited', [flippedNode(nodes[0] as string), ...nodes.slice(1)]],
      ['truncated', nodes.slice(0, -1)],
      ['no nodes', []],
      ['branch dropped', [nodes[0] as string, ...nodes.slice(2)]],
      ['storage nodes instead', honest.storageProof[0]?.proof as string[]],
      ['reordered', [...nodes].reverse()],
    ];
    for (const [what, accountProof] of lies) {
      const failure = failureOf(await verifyAccountProof(STATE_ROOT, ADDRESS, { ...honest, accountProof }));
      assert.equal(failure?.check, 'account-proof', what);
    }
    const storageLies: [string, (proof: string[]) => string[]][] = [
      ['leaf edited', (proof) => [...proof.slice(0, -1), flippedNode(proof.at(-1) as string)]],
      ['truncated', (proof) => proof.slice(0, -1)],
      ['account nodes instead', () => nodes],
    ];
    for (const [what, change] of storageLies) {
      const lie = storageProof((entry) => ({ ...entry, proof: change(entry.proof) }));
      assert.equal(
        failureOf(await verifyAccountProof(STATE_ROOT, ADDRESS, lie, ['0x0']))?.check,
        'storage-proof',
        what,
      );
    }
  });

  test('claiming the account or a slot is absent needs a proof that walks', async () => {
    const empty = {
      ...honest,
      balance: '0x0',
      nonce: '0x0',
      codeHash: EMPTY_CODE_HASH,
      storageHash: EMPTY_STORAGE_HASH,
      storageProof: [],
    };
    for (const accountProof of [
      honest.accountProof.slice(0, -1),
      [],
      [flippedNode(honest.accountProof[0] as string)],
    ]) {
      const failure = failureOf(await verifyAccountProof(STATE_ROOT, ADDRESS, { ...empty, accountProof }));
      assert.equal(failure?.check, 'account-proof');
    }
    const unset = storageProof((entry) => ({ ...entry, value: '0x0', proof: entry.proof.slice(0, -1) }));
    assert.equal(failureOf(await verifyAccountProof(STATE_ROOT, ADDRESS, unset, ['0x0']))?.check, 'storage-proof');
  });

  test('a proof of another account or slot, or against another state root, is refused', async () => {
    const other = `0x${'42'.repeat(20)}`;
    assert.equal(failureOf(await verifyAccountProof(STATE_ROOT, other, honest))?.check, 'account-proof');
    const otherRoot = fixtures.blocks.prague.result.stateRoot;
    assert.equal(failureOf(await verifyAccountProof(otherRoot, ADDRESS, honest))?.check, 'account-proof');
    const otherSlot = storageProof((entry) => ({ ...entry, key: '0x1' }));
    assert.equal(failureOf(await verifyAccountProof(STATE_ROOT, ADDRESS, otherSlot, ['0x0']))?.check, 'storage-proof');
    assert.equal(failureOf(await verifyAccountProof(STATE_ROOT, ADDRESS, honest, ['0x1']))?.check, 'storage-proof');
  });

  test('a slot is one slot whatever its hex form', () => {
    assert.equal(storageSlotKey('0x0'), storageSlotKey(`0x${'00'.repeat(32)}`));
    assert.equal(storageSlotKey('0x00'), `0x${'00'.repeat(32)}`);
    assert.equal(storageSlotKey('0x1'), `0x${'00'.repeat(31)}01`);
  });
});
