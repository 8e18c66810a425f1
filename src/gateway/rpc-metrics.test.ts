/**
 * switchyard_rpc_requests_total counts each call under its network, method label and outcome — also when
 * calls alternate between methods, networks and outcomes (the last series is remembered: a wrong reuse
 * would count a call under its neighbour's labels).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricsRegistry } from '../metrics/registry.js';
import { RpcMetrics } from './rpc-metrics.js';

function counts(registry: MetricsRegistry): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of registry.render().split('\n')) {
    const match = /^switchyard_rpc_requests_total\{(.*)\} (\d+)$/.exec(line);
    if (match) out[match[1] as string] = Number(match[2]);
  }
  return out;
}

describe('per-method call series', () => {
  it('counts every call under its own labels, however calls alternate', () => {
    const registry = new MetricsRegistry();
    const rpc = new RpcMetrics(registry, ['sepolia', 'holesky']);
    const calls: Array<[string, string, 'ok' | 'error_answer' | 'refused']> = [
      ['sepolia', 'eth_call', 'ok'],
      ['sepolia', 'eth_call', 'ok'],
      ['sepolia', 'eth_call', 'error_answer'],
      ['sepolia', 'eth_getBalance', 'error_answer'],
      ['holesky', 'eth_getBalance', 'error_answer'],
      ['sepolia', 'eth_call', 'ok'],
      ['nowhere', 'made_up_method', 'refused'],
      ['elsewhere', 'another_one', 'refused'],
    ];
    for (const [network, method, outcome] of calls) rpc.call(network, method, outcome);
    assert.deepEqual(counts(registry), {
      'network="sepolia",method="eth_call",outcome="ok"': 3,
      'network="sepolia",method="eth_call",outcome="error_answer"': 1,
      'network="sepolia",method="eth_getBalance",outcome="error_answer"': 1,
      'network="holesky",method="eth_getBalance",outcome="error_answer"': 1,
      'network="unknown",method="other",outcome="refused"': 2,
    });
  });
});
