/**
 * The EVM's state for local execution: ethereumjs's `SimpleStateManager` (journaled in-memory writes with
 * checkpoints) over a read-through cache of proven state. A read the journal does not answer goes to the
 * `ProvenStateSource` port once — account with its proof, a storage slot with its proof, code checked
 * against the proven code hash — and is cached for the life of the manager (one call or estimate: many
 * runs over one trusted block). Nothing unproven ever enters.
 *
 * - `preload` fetches accounts and slots in parallel (what eth_createAccessList reported, plus sender,
 *   recipient and coinbase); whatever execution touches beyond that is fetched when touched, one round
 *   trip each.
 * - Storage of an account whose storage was cleared or that was deleted in the journal (a created or
 *   destroyed contract) reads 0, not the proven value: a `<address>_cleared` marker in the journal says so.
 * - Slots of an account with empty storage (or no account) read 0 without a proof of the slot.
 */

import type { Common } from '@ethereumjs/common';
import { SimpleStateManager } from '@ethereumjs/statemanager';
import {
  type Account,
  type Address,
  bigIntToUnpaddedBytes,
  createAccount,
  equalsBytes,
  KECCAK256_NULL,
} from '@ethereumjs/util';
import { dataBytes, type Hex, sameHex, toHex } from './encoding.js';
import { EMPTY_STORAGE_HASH, type ProvenAccount, storageSlotKey } from './proofs.js';
import type { ProvenStateSource } from './state-source.js';

const CLEARED = '_cleared';

export interface StateRequest {
  readonly address: string;
  readonly storageKeys?: readonly string[];
}

export class ProvenStateManager extends SimpleStateManager {
  readonly #source: ProvenStateSource;
  readonly #accounts = new Map<string, Promise<ProvenAccount>>();
  readonly #slots = new Map<string, Promise<bigint>>();
  readonly #code = new Map<string, Promise<Uint8Array>>();

  constructor(source: ProvenStateSource, common: Common) {
    super({ common });
    this.#source = source;
  }

  /** Fetches these accounts and slots now, in parallel (one proof per account). */
  async preload(requests: readonly StateRequest[]): Promise<void> {
    const slotsByAddress = new Map<string, Set<Hex>>();
    for (const request of requests) {
      const address = request.address.toLowerCase();
      const slots = slotsByAddress.get(address) ?? new Set<Hex>();
      for (const key of request.storageKeys ?? []) slots.add(storageSlotKey(key));
      slotsByAddress.set(address, slots);
    }
    await Promise.all(
      [...slotsByAddress].map(([address, slots]) => {
        const wanted = [...slots].filter((slot) => !this.#slots.has(`${address}${slot}`));
        if (this.#accounts.has(address) && wanted.length === 0) return this.#accounts.get(address);
        return this.#fetch(address, wanted);
      }),
    );
  }

  /** One proof of the account and `slots`; fills both caches (the account only when not known yet). */
  #fetch(address: string, slots: readonly Hex[]): Promise<ProvenAccount> {
    const proof = this.#source.account(address as Hex, slots);
    if (!this.#accounts.has(address)) this.#accounts.set(address, proof);
    for (const slot of slots) {
      const value = proof.then((account) => account.storage.get(slot) ?? 0n);
      // A failed proof is reported to whoever awaits it; the cached copy alone must not count as unhandled.
      value.catch(() => undefined);
      this.#slots.set(`${address}${slot}`, value);
    }
    return proof;
  }

  #proven(address: string): Promise<ProvenAccount> {
    return this.#accounts.get(address) ?? this.#fetch(address, []);
  }

  override async getAccount(address: Address): Promise<Account | undefined> {
    const key = address.toString();
    const journal = this.topAccountStack();
    if (journal.has(key)) return journal.get(key);
    const proven = await this.#proven(key);
    if (!proven.exists) return undefined;
    return createAccount({
      nonce: proven.nonce,
      balance: proven.balance,
      storageRoot: dataBytes(proven.storageHash),
      codeHash: dataBytes(proven.codeHash),
    });
  }

  override async getCode(address: Address): Promise<Uint8Array> {
    const key = address.toString();
    const written = this.topCodeStack().get(key);
    if (written !== undefined) return written;
    const account = await this.getAccount(address);
    if (account === undefined || equalsBytes(account.codeHash, KECCAK256_NULL)) return new Uint8Array(0);
    const proven = await this.#proven(key);
    if (!sameHex(toHex(account.codeHash), proven.codeHash)) return new Uint8Array(0);
    let code = this.#code.get(key);
    if (code === undefined) {
      code = this.#source.code(key as Hex, proven.codeHash);
      this.#code.set(key, code);
    }
    return code;
  }

  override async getCodeSize(address: Address): Promise<number> {
    return (await this.getCode(address)).length;
  }

  override async getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    const account = address.toString();
    const journal = this.topStorageStack();
    const written = journal.get(`${account}_${toHex(key)}`);
    if (written !== undefined) return written;
    if (journal.has(`${account}${CLEARED}`)) return new Uint8Array(0);
    const proven = await this.#proven(account);
    if (!proven.exists || sameHex(proven.storageHash, EMPTY_STORAGE_HASH)) return new Uint8Array(0);
    const slot = storageSlotKey(toHex(key));
    let value = this.#slots.get(`${account}${slot}`);
    if (value === undefined) {
      await this.#fetch(account, [slot]);
      value = this.#slots.get(`${account}${slot}`) as Promise<bigint>;
    }
    return bigIntToUnpaddedBytes(await value);
  }

  override async clearStorage(address: Address): Promise<void> {
    await super.clearStorage(address);
    this.topStorageStack().set(`${address.toString()}${CLEARED}`, new Uint8Array(0));
  }

  override async deleteAccount(address: Address): Promise<void> {
    await super.deleteAccount(address);
    this.topCodeStack().set(address.toString(), new Uint8Array(0));
    this.topStorageStack().set(`${address.toString()}${CLEARED}`, new Uint8Array(0));
  }

  override shallowCopy(): never {
    throw new Error('a ProvenStateManager is not copied: one manager serves one execution');
  }
}
