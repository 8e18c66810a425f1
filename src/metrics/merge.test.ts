import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderMerged } from './merge.js';
import { MetricsRegistry } from './registry.js';

/** Two registries as two gateway workers would fill them, plus one only the control has. */
function parts(): MetricsRegistry[] {
  const a = new MetricsRegistry();
  const b = new MetricsRegistry();
  for (const [registry, ok, open, fast] of [
    [a, 3, 2, 0.05],
    [b, 4, 5, 0.5],
  ] as const) {
    registry.counter('t_requests_total', 'Requests', ['status']).inc({ status: '200' }, ok);
    registry.gauge('t_open', 'Open connections').set({}, open);
    registry.histogram('t_seconds', 'Time', ['network'], [0.1, 1]).observe({ network: 'n' }, fast);
  }
  b.counter('t_requests_total', 'Requests', ['status']).inc({ status: '429' });
  return [a, b];
}

test('counters and gauges with the same labels are summed; other label sets stay apart', () => {
  const control = new MetricsRegistry();
  control.gauge('t_pools', 'Pools', [], () => 7);
  const text = renderMerged([control, ...parts()].map((registry) => registry.families()));
  assert.match(text, /^t_requests_total\{status="200"\} 7$/m);
  assert.match(text, /^t_requests_total\{status="429"\} 1$/m);
  assert.match(text, /^t_open 7$/m);
  assert.match(text, /^t_pools 7$/m);
  assert.equal(text.match(/# TYPE t_requests_total counter/g)?.length, 1);
});

test('histograms are summed bucket by bucket, with their sum and count', () => {
  const text = renderMerged(parts().map((registry) => registry.families()));
  assert.match(text, /^t_seconds_bucket\{network="n",le="0.1"\} 1$/m);
  assert.match(text, /^t_seconds_bucket\{network="n",le="1"\} 2$/m);
  assert.match(text, /^t_seconds_bucket\{network="n",le="\+Inf"\} 2$/m);
  assert.match(text, /^t_seconds_sum\{network="n"\} 0.55$/m);
  assert.match(text, /^t_seconds_count\{network="n"\} 2$/m);
});

test('a family of the same name but another type or other buckets is left out, not mixed in', () => {
  const a = new MetricsRegistry();
  a.counter('t_x', 'X').inc({}, 2);
  a.histogram('t_h', 'H', [], [1]).observe({}, 0.5);
  const b = new MetricsRegistry();
  b.gauge('t_x', 'X').set({}, 40);
  b.histogram('t_h', 'H', [], [2]).observe({}, 0.5);
  const text = renderMerged([a.families(), b.families()]);
  assert.match(text, /^t_x 2$/m);
  assert.match(text, /^t_h_count 1$/m);
});

test('a registry merged alone renders as it renders itself', () => {
  const [a] = parts();
  assert.ok(a !== undefined);
  assert.equal(renderMerged([a.families()]), a.render());
});
