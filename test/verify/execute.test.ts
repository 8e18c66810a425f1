/**
 * eth_call and eth_estimateGas executed locally over proven state, compared with a real anvil: a
 * contract that reads several storage slots, calls another contract (which reads three more, one a high
 * 32-byte slot) and reads its balance. The local answer equals anvil's (result, revert, estimate); a lie
 * from the origin about any touched slot, balance or code is caught before an answer exists.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { LocalCallAnswer } from '../../src/verify/call-answer.js';
import { type ExecutionContext, estimateGas, executeCall } from '../../src/verify/execute.js';
import { isVerificationError } from '../../src/verify/failure.js';
import type { TrustedHeader } from '../../src/verify/header.js';
import { storageSlotKey } from '../../src/verify/proofs.js';
import { createProofReader, type ProofReader } from '../../src/verify/state-source.js';
import { call } from '../helpers/devnet-chain.js';
import { rpc } from '../helpers/http.js';
import {
  type ContractChain,
  HIGH_SLOT,
  latestHeader,
  receipt,
  sender,
  startContractChain,
} from '../helpers/proof-chain.js';
import { type Lie, originCall } from '../helpers/verify-lies.js';

type Proof = { balance: string; storageProof: { key: string; value: string }[] };

describe('local eth_call and eth_estimateGas over proven state (anvil)', () => {
  let chain: ContractChain;
  let header: TrustedHeader;
  let tag: string;

  before(async () => {
    chain = await startContractChain();
    const funding = await sender(chain.node.url, chain.chainId).send({
      to: chain.vault,
      value: 1n,
      gasPrice: 2_000_000_000n,
    });
    await receipt(chain.node.url, funding);
    ({ header, tag } = await latestHeader(chain.node.url));
  });
  after(() => chain?.node.stop());

  const context = (reader: ProofReader, extra: Partial<ExecutionContext> = {}): ExecutionContext => ({
    header,
    chainId: BigInt(chain.chainId),
    source: reader,
    ...extra,
  });
  const honestReader = (lie?: Lie) => createProofReader({ call: originCall(chain.node.url, lie), header });

  /** What anvil answers for the same call at the same block, in the local answer's shape. */
  async function origin(method: string, request: Record<string, unknown>): Promise<LocalCallAnswer> {
    const { answer } = await rpc(chain.node.url, method, [request, tag]);
    return answer.error === undefined ? { result: answer.result as `0x${string}` } : { error: answer.error as never };
  }

  test('the local eth_call equals anvil’s: slots, the nested call, a write, a revert, BLOCKHASH', async () => {
    for (const data of ['0x', '0x01', '0x03', '0x04', '0x06']) {
      const request = { to: chain.reader, data };
      const reader = honestReader();
      const local = await executeCall(request, context(reader));
      assert.deepEqual(local, await origin('eth_call', request), `selector ${data}`);
      assert.ok(reader.calls > 0);
    }
    const sum = await executeCall({ to: chain.reader }, context(honestReader()));
    assert.ok('result' in sum);
    assert.equal(BigInt(sum.result), 100n + 1000n + 10000n + 31n + 123_456n + 1n);
  });

  test('eth_estimateGas equals anvil’s, reverts and refunds included', async () => {
    for (const data of ['0x', '0x01', '0x02', '0x03', '0x06']) {
      const request = { to: chain.reader, data };
      assert.deepEqual(
        await estimateGas(request, context(honestReader())),
        await origin('eth_estimateGas', request),
        data,
      );
    }
  });

  test('the block context comes from the trusted header; an unpriced call sees base fee 0 (geth’s rule)', async () => {
    const request = { to: chain.reader, data: '0x02' };
    const local = await executeCall(request, context(honestReader()));
    const anvil = await origin('eth_call', request);
    assert.ok('result' in local && 'result' in anvil);
    const words = (hex: string) => hex.slice(2).match(/.{64}/g) ?? [];
    assert.deepEqual(words(local.result).slice(0, 6), words(anvil.result).slice(0, 6));
    assert.equal(BigInt(`0x${words(local.result)[6]}`), 0n);
    assert.equal(BigInt(`0x${words(local.result)[0]}`), header.number);
    const priced = { ...request, from: sender(chain.node.url, chain.chainId).address, gasPrice: '0x77359400' };
    assert.deepEqual(await executeCall(priced, context(honestReader())), await origin('eth_call', priced));
  });

  test('eth_createAccessList’s list preloads in parallel: the same answer from fewer origin calls', async () => {
    const request = { to: chain.reader };
    const { answer } = await rpc(chain.node.url, 'eth_createAccessList', [request, tag]);
    const hint = (answer.result as { accessList: { address: string; storageKeys: string[] }[] }).accessList;
    assert.ok(hint.length >= 2);
    const cold = honestReader();
    const warm = honestReader();
    const coldAnswer = await executeCall(request, context(cold));
    const warmAnswer = await executeCall(request, context(warm, { accessList: hint }));
    assert.deepEqual(warmAnswer, coldAnswer);
    assert.ok(warm.calls < cold.calls, `${warm.calls} calls with the list, ${cold.calls} without`);
  });

  test('a lie about any slot, balance or code the call touches is caught', async () => {
    const slot = (address: string, key: bigint): [string, string] => [address.toLowerCase(), storageSlotKey(key)];
    const touched = [
      slot(chain.reader, 0n),
      slot(chain.reader, 1n),
      slot(chain.reader, 2n),
      slot(chain.reader, 3n),
      slot(chain.vault, 0n),
      slot(chain.vault, 1n),
      slot(chain.vault, HIGH_SLOT),
    ];
    for (const [address, key] of touched) {
      const lie: Lie = (method, params, result) => {
        if (method !== 'eth_getProof' || String(params[0]).toLowerCase() !== address) return result;
        const proof = result as Proof;
        for (const entry of proof.storageProof) if (storageSlotKey(entry.key) === key) entry.value = '0x2a';
        return proof;
      };
      await assert.rejects(executeCall({ to: chain.reader }, context(honestReader(lie))), (err) => {
        assert.ok(isVerificationError(err), String(err));
        assert.equal(err.failure.check, 'storage-proof', `${address} ${key}`);
        return true;
      });
    }
    const balanceLie: Lie = (method, params, result) =>
      method === 'eth_getProof' && String(params[0]).toLowerCase() === chain.vault.toLowerCase()
        ? { ...(result as Proof), balance: '0x1' }
        : result;
    const codeLie: Lie = (method, params, result) =>
      method === 'eth_getCode' && String(params[0]).toLowerCase() === chain.vault.toLowerCase() ? '0x00' : result;
    for (const [lie, check] of [
      [balanceLie, 'account-proof'],
      [codeLie, 'code-hash'],
    ] as const) {
      await assert.rejects(executeCall({ to: chain.reader }, context(honestReader(lie))), (err) => {
        assert.ok(isVerificationError(err));
        assert.equal(err.failure.check, check);
        return true;
      });
    }
  });

  test('BLOCKHASH beyond the parent needs a trusted hash; with one it equals anvil’s', async () => {
    const request = { to: chain.reader, data: '0x05' };
    await assert.rejects(executeCall(request, context(honestReader())), (err) => {
      assert.ok(isVerificationError(err));
      assert.equal(err.failure.check, 'execution');
      return true;
    });
    const trustedBlockHash = async (number: bigint) =>
      (await call<{ hash: string }>(chain.node.url, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, false])).hash;
    const reader = createProofReader({ call: originCall(chain.node.url), header, trustedBlockHash });
    assert.deepEqual(await executeCall(request, context(reader)), await origin('eth_call', request));
  });

  test('what cannot be proven locally is refused, and a poor sender gets geth’s error', async () => {
    await assert.rejects(executeCall({ from: chain.vault, to: chain.reader }, context(honestReader())), (err) => {
      assert.ok(isVerificationError(err));
      assert.equal(err.failure.check, 'execution');
      return true;
    });
    // A valid KZG proof (commitment and proof at infinity: the zero polynomial) that anvil verifies.
    const commitment = `c0${'00'.repeat(47)}`;
    const versionedHash = `01${createHash('sha256').update(Buffer.from(commitment, 'hex')).digest('hex').slice(2)}`;
    const pointEvaluation = {
      to: `0x${'00'.repeat(19)}0a`,
      data: `0x${versionedHash}${'00'.repeat(64)}${commitment}${commitment}`,
    };
    assert.ok('result' in (await origin('eth_call', pointEvaluation)));
    await assert.rejects(executeCall(pointEvaluation, context(honestReader())), (err) => {
      assert.ok(isVerificationError(err));
      assert.equal(err.failure.check, 'execution');
      return true;
    });
    const poor = { from: `0x${'ab'.repeat(20)}`, to: chain.vault, value: '0x1' };
    assert.deepEqual(await executeCall(poor, context(honestReader())), {
      error: { code: -32000, message: 'insufficient funds for gas * price + value' },
    });
    const malformed = await executeCall({ to: 'nowhere' }, context(honestReader()));
    assert.equal('error' in malformed && malformed.error.code, -32602);
  });
});
