import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildConfig } from '../../../config/load.js';
import type { OriginScore } from '../../../model/origin-score.js';
import { hedgeDelay, MethodRules, mayHedge, P90_FALLBACK_MS } from './method-rules.js';

function rules(network: Record<string, unknown>) {
  const config = buildConfig({ networks: { n: { chain_id: 1, pools: [], ...network } } }, '(test)');
  return new MethodRules(config.networks, { timeoutMs: 10_000, maxAttempts: 3 });
}

describe('per-method rules', () => {
  it('an exact name wins over a pattern, a longer pattern over a shorter; the rest falls back', () => {
    const r = rules({
      hedge: { after: '200ms' },
      methods: {
        'eth_*': { timeout: '1s' },
        'eth_get*': { max_attempts: 1 },
        eth_getLogs: { timeout: '30s', hedge: 'off' },
      },
    });
    assert.deepEqual(r.forCall('n', 'eth_getLogs'), {
      timeoutMs: 30_000,
      maxAttempts: 3,
      hedge: undefined,
      verify: 'off',
    });
    assert.deepEqual(r.forCall('n', 'eth_getBalance'), {
      timeoutMs: 10_000,
      maxAttempts: 1,
      hedge: { after: 200, max: 1 },
      verify: 'off',
    });
    assert.deepEqual(r.forCall('n', 'eth_call'), {
      timeoutMs: 1_000,
      maxAttempts: 3,
      hedge: { after: 200, max: 1 },
      verify: 'off',
    });
    assert.deepEqual(r.forCall('n', 'net_version'), {
      timeoutMs: 10_000,
      maxAttempts: 3,
      hedge: { after: 200, max: 1 },
      verify: 'off',
    });
    assert.deepEqual(r.forCall('other', 'eth_call'), {
      timeoutMs: 10_000,
      maxAttempts: 3,
      hedge: undefined,
      verify: 'off',
    });
  });

  it('writes, filter calls and subscriptions are never hedged', () => {
    const r = rules({ hedge: { after: 'p90' }, methods: { eth_sendRawTransaction: { hedge: { after: '10ms' } } } });
    for (const method of [
      'eth_sendRawTransaction',
      'eth_sendTransaction',
      'eth_newFilter',
      'eth_getFilterChanges',
      'eth_subscribe',
    ]) {
      assert.equal(mayHedge(method), false, method);
      assert.equal(r.forCall('n', method).hedge, undefined, method);
    }
    assert.equal(mayHedge('eth_getLogs'), true);
  });

  it('a batch: the longest timeout, the fewest attempts, no hedge unless every call hedges as the network', () => {
    const r = rules({
      hedge: { after: 'p90' },
      methods: { eth_getLogs: { timeout: '30s', max_attempts: 2, hedge: 'off' } },
    });
    assert.deepEqual(r.forBatch('n', ['eth_call', 'eth_getBalance']), {
      timeoutMs: 10_000,
      maxAttempts: 3,
      hedge: { after: 'p90', max: 1 },
      verify: 'off',
    });
    assert.deepEqual(r.forBatch('n', ['eth_call', 'eth_getLogs']), {
      timeoutMs: 30_000,
      maxAttempts: 2,
      hedge: undefined,
      verify: 'off',
    });
  });

  it('a network without method rules or hedging: every call and batch has its own rules', () => {
    const r = rules({ verify: 'integrity' });
    for (const method of ['eth_call', 'eth_sendRawTransaction', 'eth_subscribe'])
      assert.deepEqual(r.forCall('n', method), {
        timeoutMs: 10_000,
        maxAttempts: 3,
        hedge: undefined,
        verify: 'integrity',
      });
    assert.deepEqual(r.forBatch('n', ['eth_call', 'eth_getBalance']), {
      timeoutMs: 10_000,
      maxAttempts: 3,
      hedge: undefined,
      verify: 'off',
    });
  });

  it('verify (SPEC §18): the method’s own, else the network’s; off by default', () => {
    const r = rules({
      verify: 'integrity',
      methods: { eth_getBalance: { verify: 'proofs' }, 'debug_*': { verify: 'off' } },
    });
    assert.equal(r.forCall('n', 'eth_getBalance').verify, 'proofs');
    assert.equal(r.forCall('n', 'eth_getLogs').verify, 'integrity');
    assert.equal(r.forCall('n', 'debug_traceCall').verify, 'off');
    assert.equal(rules({}).forCall('n', 'eth_getBalance').verify, 'off');
    assert.equal(r.verifies('n'), true);
    assert.equal(rules({ methods: { eth_call: { verify: 'proofs' } } }).verifies('n'), true, 'one method is enough');
    assert.equal(rules({ methods: { eth_call: { verify: 'off' } } }).verifies('n'), false);
    assert.equal(rules({}).verifies('n'), false);
    assert.throws(() => rules({ verify: 'all' }), /verify/);
    assert.throws(() => rules({ verify_anchor: { quorum: 1 } }), /quorum/);
  });

  it('bad rules are refused at load, naming the key', () => {
    assert.throws(() => rules({ methods: { 'eth-x': {} } }), /methods/);
    assert.throws(() => rules({ hedge: { after: 'p50' } }), /hedge/);
    assert.throws(() => rules({ methods: { eth_call: { retries: 2 } } }), /retries/);
    assert.throws(() => rules({ steering: 'fastest' }), /steering/);
  });

  it("hedge delay: the origin's p90 once it has 20 answers, 250 ms before; or the duration", () => {
    const score = (answered: number, p90: number): OriginScore => ({
      samples: answered,
      answered,
      p50_ms: p90 / 2,
      p90_ms: p90,
      error_ratio: 0,
      throttle_ratio: 0,
      score: p90 / 1000,
    });
    assert.equal(hedgeDelay({ after: 'p90', max: 1 }, undefined), P90_FALLBACK_MS);
    assert.equal(hedgeDelay({ after: 'p90', max: 1 }, score(19, 40)), P90_FALLBACK_MS);
    assert.equal(hedgeDelay({ after: 'p90', max: 1 }, score(20, 40)), 40);
    assert.equal(hedgeDelay({ after: 75, max: 1 }, score(100, 40)), 75);
  });
});
