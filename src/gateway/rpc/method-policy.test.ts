import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MethodPolicy } from './method-policy.js';
import { STANDARD_METHODS } from './methods.js';

describe('MethodPolicy', () => {
  const standard = new MethodPolicy('sepolia');

  it('allows every standard execution-API method', () => {
    for (const method of Object.keys(STANDARD_METHODS)) assert.equal(standard.check(method), undefined, method);
    for (const method of [
      'eth_chainId',
      'eth_call',
      'eth_sendRawTransaction',
      'net_version',
      'net_listening',
      'net_peerCount',
      'web3_clientVersion',
      'web3_sha3',
    ]) {
      assert.equal(standard.check(method), undefined, method);
    }
  });

  it('refuses the admin_ debug_ personal_ miner_ txpool_ engine_ namespaces, naming the config key', () => {
    for (const method of [
      'admin_addPeer',
      'debug_traceTransaction',
      'personal_unlockAccount',
      'miner_setEtherbase',
      'txpool_status',
      'engine_forkchoiceUpdatedV3',
    ]) {
      const error = standard.check(method);
      assert.equal(error?.code, 'RPC_METHOD_NOT_ALLOWED', method);
      assert.equal(error?.spec.rpc, -32601);
      assert.match(error?.message ?? '', /networks\.sepolia\.allow_methods/);
    }
  });

  it('refuses subscriptions over HTTP and says what to use instead', () => {
    for (const method of ['eth_subscribe', 'eth_unsubscribe']) {
      const error = standard.check(method);
      assert.equal(error?.code, 'RPC_METHOD_NOT_ALLOWED');
      assert.match(error?.message ?? '', /WebSocket/);
    }
  });

  it('refuses unknown methods as not found', () => {
    for (const method of ['eth_foo', 'anvil_mine', 'rpc.discover', 'ETH_CHAINID', 'hardhat_reset']) {
      assert.equal(standard.check(method)?.code, 'RPC_METHOD_NOT_FOUND', method);
    }
  });

  it('allow_methods opens exact names and namespace patterns', () => {
    const policy = new MethodPolicy('dev', ['debug_*', 'txpool_content', 'anvil_mine']);
    assert.equal(policy.check('debug_traceCall'), undefined);
    assert.equal(policy.check('txpool_content'), undefined);
    assert.equal(policy.check('anvil_mine'), undefined);
    assert.equal(policy.check('txpool_inspect')?.code, 'RPC_METHOD_NOT_ALLOWED');
    assert.equal(policy.check('anvil_reset')?.code, 'RPC_METHOD_NOT_FOUND');
  });

  it('deny_methods wins over the standard list and over allow_methods', () => {
    const policy = new MethodPolicy('prod', ['debug_*'], ['eth_sign*', 'debug_traceCall', 'eth_accounts']);
    assert.equal(policy.check('eth_sign')?.code, 'RPC_METHOD_NOT_ALLOWED');
    assert.equal(policy.check('eth_signTransaction')?.code, 'RPC_METHOD_NOT_ALLOWED');
    assert.equal(policy.check('eth_accounts')?.code, 'RPC_METHOD_NOT_ALLOWED');
    assert.equal(policy.check('debug_traceCall')?.code, 'RPC_METHOD_NOT_ALLOWED');
    assert.equal(policy.check('debug_traceTransaction'), undefined);
    assert.equal(policy.check('eth_chainId'), undefined);
  });

  it('does not treat inherited object keys as methods', () => {
    assert.equal(standard.check('constructor')?.code, 'RPC_METHOD_NOT_FOUND');
    assert.equal(standard.check('__proto__')?.code, 'RPC_METHOD_NOT_FOUND');
  });
});
