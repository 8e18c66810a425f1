/**
 * eth_getProof answers of a real anvil verified against the state root of its latest block: an account
 * with a balance, a contract with set and unset slots (one high 32-byte slot), an absent account, code
 * against its code hash — and every lie tried on them refused: values changed without fixing the nodes,
 * nodes flipped, dropped or swapped for another account's, a proof from another block, wrong code.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TrustedHeader } from '../../src/verify/header.js';
import { EMPTY_CODE_HASH, storageSlotKey, verifyAccountProof, verifyCode } from '../../src/verify/proofs.js';
import { createProofReader } from '../../src/verify/state-source.js';
import { call } from '../helpers/devnet-chain.js';
import {
  type ContractChain,
  HIGH_SLOT,
  latestHeader,
  sender,
  startContractChain,
  VAULT_BALANCE,
} from '../helpers/proof-chain.js';
import { flippedNode, originCall } from '../helpers/verify-lies.js';

type Proof = {
  address: string;
  balance: string;
  nonce: string;
  codeHash: string;
  storageHash: string;
  accountProof: string[];
  storageProof: { key: string; value: string; proof: string[] }[];
};

const ABSENT = `0x${'ab'.repeat(20)}`;
const UNSET_SLOT = storageSlotKey(9n);
const SLOT_0 = storageSlotKey(0n);
const SLOT_1 = storageSlotKey(1n);

describe('eth_getProof against a trusted state root (anvil)', () => {
  let chain: ContractChain;
  let header: TrustedHeader;
  let tag: string;
  const proof = (address: string, slots: string[] = [], at = tag) =>
    call<Proof>(chain.node.url, 'eth_getProof', [address, slots, at]);

  before(async () => {
    chain = await startContractChain();
    ({ header, tag } = await latestHeader(chain.node.url));
  });
  after(() => chain?.node.stop());

  test('an account with a balance, a contract with set and unset slots, and an absent account verify', async () => {
    const funded = sender(chain.node.url, chain.chainId).address;
    const eoa = await verifyAccountProof(header.stateRoot, funded, await proof(funded));
    assert.ok(eoa.ok);
    assert.equal(eoa.value.codeHash, EMPTY_CODE_HASH);
    assert.equal(eoa.value.balance, BigInt(await call<string>(chain.node.url, 'eth_getBalance', [funded, tag])));

    const slots = [SLOT_0, SLOT_1, storageSlotKey(HIGH_SLOT), UNSET_SLOT];
    const vault = await verifyAccountProof(header.stateRoot, chain.vault, await proof(chain.vault, slots), slots);
    assert.ok(vault.ok, JSON.stringify(!vault.ok && vault.failure));
    assert.equal(vault.value.balance, VAULT_BALANCE);
    assert.deepEqual([...vault.value.storage.values()], [7n, 11n, 13n, 0n]);

    const absent = await verifyAccountProof(header.stateRoot, ABSENT, await proof(ABSENT, [SLOT_0]), [SLOT_0]);
    assert.ok(absent.ok, JSON.stringify(!absent.ok && absent.failure));
    assert.equal(absent.value.exists, false);
    assert.equal(absent.value.storage.get(SLOT_0), 0n);
  });

  test('code verifies against the proven code hash; another contract’s code does not', async () => {
    const reader = await verifyAccountProof(header.stateRoot, chain.reader, await proof(chain.reader));
    assert.ok(reader.ok);
    const code = await call<string>(chain.node.url, 'eth_getCode', [chain.reader, tag]);
    assert.ok((await verifyCode(code, reader.value.codeHash)).ok);
    const vaultCode = await call<string>(chain.node.url, 'eth_getCode', [chain.vault, tag]);
    const wrong = await verifyCode(vaultCode, reader.value.codeHash);
    assert.equal(!wrong.ok && wrong.failure.check, 'code-hash');
    const truncated = await verifyCode(code.slice(0, -2), reader.value.codeHash);
    assert.equal(!truncated.ok && truncated.failure.check, 'code-hash');
  });

  test('every lie about the account or a slot is refused', async () => {
    const honest = await proof(chain.vault, [SLOT_1]);
    const other = await proof(chain.reader, [SLOT_1]);
    const absent = await proof(ABSENT);
    const lies: [string, Proof, string][] = [
      ['balance changed', { ...honest, balance: '0x1' }, 'account-proof'],
      [
        'slot value changed',
        { ...honest, storageProof: [{ ...(honest.storageProof[0] as Proof['storageProof'][0]), value: '0x63' }] },
        'storage-proof',
      ],
      [
        'leaf flipped',
        {
          ...honest,
          accountProof: [...honest.accountProof.slice(0, -1), flippedNode(honest.accountProof.at(-1) as string)],
        },
        'account-proof',
      ],
      [
        'leaf swapped for another account’s',
        { ...honest, accountProof: [...honest.accountProof.slice(0, -1), other.accountProof.at(-1) as string] },
        'account-proof',
      ],
      ['another account’s proof', { ...other, address: chain.vault }, 'account-proof'],
      ['truncated', { ...honest, accountProof: honest.accountProof.slice(0, -1) }, 'account-proof'],
      [
        'proven absent with an absent account’s nodes',
        { ...honest, accountProof: absent.accountProof },
        'account-proof',
      ],
      ['slot proof of another contract', { ...honest, storageProof: other.storageProof }, 'storage-proof'],
      ['slot proof dropped', { ...honest, storageProof: [] }, 'storage-proof'],
      ['absent account claiming a balance', { ...absent, balance: '0x5' }, 'account-proof'],
    ];
    for (const [what, lie, check] of lies) {
      const address = lie.address === ABSENT ? ABSENT : chain.vault;
      const result = await verifyAccountProof(header.stateRoot, address, lie, address === ABSENT ? [] : [SLOT_1]);
      assert.equal(!result.ok && result.failure.check, check, what);
    }
  });

  test('a proof from an earlier block does not verify against the trusted root', async () => {
    const earlier = await proof(chain.vault, [SLOT_0], `0x${(header.number - 2n).toString(16)}`);
    const result = await verifyAccountProof(header.stateRoot, chain.vault, earlier, [SLOT_0]);
    assert.equal(!result.ok && result.failure.check, 'account-proof');
  });

  test('the proof reader asks at the trusted height and refuses a lying origin', async () => {
    const honest = createProofReader({ call: originCall(chain.node.url), header });
    const account = await honest.account(chain.vault, ['0x0']);
    assert.equal(account.storage.get(SLOT_0), 7n);
    assert.equal((await honest.code(chain.vault, account.codeHash)).length > 0, true);
    assert.equal(honest.calls, 2);
    const lying = createProofReader({
      call: originCall(chain.node.url, (method, _params, result) =>
        method === 'eth_getProof' ? { ...(result as Proof), nonce: '0x9' } : result,
      ),
      header,
    });
    await assert.rejects(lying.account(chain.vault, []), (err: Error & { failure?: { check: string } }) => {
      assert.equal(err.failure?.check, 'account-proof');
      return true;
    });
  });
});
