/**
 * The EVM's state over proven reads, against an in-memory `ProvenStateSource` (the port's contract is
 * that its values are proven; here they are simply given): each value is asked once, preloading asks
 * one proof per account, the journal's writes, clears and deletions win over proven values and are
 * undone by revert.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Hardfork } from '@ethereumjs/common';
import { bytesToBigInt, createAddressFromString } from '@ethereumjs/util';
import { chainCommon } from './chain-rules.js';
import { type Hex, keccak, toHex } from './encoding.js';
import { EMPTY_CODE_HASH, EMPTY_STORAGE_HASH, type ProvenAccount, storageSlotKey } from './proofs.js';
import { ProvenStateManager } from './proven-state.js';
import type { ProvenStateSource } from './state-source.js';

const CONTRACT = '0x00000000000000000000000000000000000000c0';
const NOBODY = '0x00000000000000000000000000000000000000d0';
const CODE = new Uint8Array([0x60, 0x00, 0x54]);
const STORAGE = new Map([[storageSlotKey(1n), 42n]]);

function memorySource() {
  const asked: string[] = [];
  const source: ProvenStateSource = {
    async account(address, slots) {
      asked.push(`account ${address} [${slots.join(',')}]`);
      const exists = address === CONTRACT;
      const storage = new Map(slots.map((slot) => [slot, exists ? (STORAGE.get(slot) ?? 0n) : 0n]));
      const account: ProvenAccount = {
        address,
        exists,
        nonce: exists ? 1n : 0n,
        balance: exists ? 5n : 0n,
        codeHash: exists ? toHex(keccak(CODE)) : EMPTY_CODE_HASH,
        storageHash: exists ? (`0x${'11'.repeat(32)}` as Hex) : EMPTY_STORAGE_HASH,
        storage,
      };
      return account;
    },
    async code(address) {
      asked.push(`code ${address}`);
      return CODE;
    },
    async blockHash() {
      throw new Error('not asked here');
    },
  };
  return { source, asked };
}

const slot = (n: bigint) => Buffer.from(storageSlotKey(n).slice(2), 'hex');
const contract = createAddressFromString(CONTRACT);
const nobody = createAddressFromString(NOBODY);

describe('proven state for the EVM', () => {
  test('accounts, slots and code come from the source, each asked once', async () => {
    const { source, asked } = memorySource();
    const state = new ProvenStateManager(source, chainCommon(1n, Hardfork.Osaka));
    assert.equal((await state.getAccount(contract))?.balance, 5n);
    assert.equal(bytesToBigInt(await state.getStorage(contract, slot(1n))), 42n);
    assert.equal(bytesToBigInt(await state.getStorage(contract, slot(1n))), 42n);
    assert.deepEqual(await state.getCode(contract), CODE);
    assert.deepEqual(await state.getCode(contract), CODE);
    assert.equal(await state.getAccount(nobody), undefined);
    assert.equal((await state.getStorage(nobody, slot(1n))).length, 0, 'no account, no storage: nothing asked');
    assert.deepEqual(asked, [
      `account ${CONTRACT} []`,
      `account ${CONTRACT} [${storageSlotKey(1n)}]`,
      `code ${CONTRACT}`,
      `account ${NOBODY} []`,
    ]);
  });

  test('preloading asks one proof per account with all its slots, in parallel', async () => {
    const { source, asked } = memorySource();
    const state = new ProvenStateManager(source, chainCommon(1n, Hardfork.Osaka));
    await state.preload([
      { address: CONTRACT, storageKeys: ['0x1'] },
      { address: CONTRACT, storageKeys: [storageSlotKey(2n)] },
      { address: NOBODY },
    ]);
    assert.equal(asked.length, 2);
    assert.equal(bytesToBigInt(await state.getStorage(contract, slot(2n))), 0n);
    assert.equal(asked.length, 2, 'preloaded slots are not asked again');
  });

  test('writes, clears and deletions win over proven values until reverted', async () => {
    const { source } = memorySource();
    const state = new ProvenStateManager(source, chainCommon(1n, Hardfork.Osaka));
    await state.checkpoint();
    await state.putStorage(contract, slot(1n), new Uint8Array([7]));
    assert.equal(bytesToBigInt(await state.getStorage(contract, slot(1n))), 7n);
    await state.clearStorage(contract);
    assert.equal((await state.getStorage(contract, slot(1n))).length, 0, 'cleared storage is not the proven value');
    await state.revert();
    assert.equal(bytesToBigInt(await state.getStorage(contract, slot(1n))), 42n);
    await state.checkpoint();
    await state.deleteAccount(contract);
    assert.equal(await state.getAccount(contract), undefined);
    assert.equal((await state.getCode(contract)).length, 0);
    assert.equal((await state.getStorage(contract, slot(1n))).length, 0);
    await state.revert();
    assert.deepEqual(await state.getCode(contract), CODE);
  });
});
