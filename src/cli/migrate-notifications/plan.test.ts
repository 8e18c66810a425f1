import assert from 'node:assert/strict';
import { test } from 'node:test';
import { filterSpecs, requiredTriples } from './legacy-filters.js';
import { buildPlan, type PoolRecord } from './plan.js';
import { type ApiPolicy, coverageOf, groupKey, isCovered, markerOf, policyDescription } from './policy-bodies.js';

const none = { byKey: new Map<string, ApiPolicy>(), duplicates: [] };
const pool = (id: string, email: string, filter: PoolRecord['notification_filter'] = null): PoolRecord => ({
  id,
  name: `pool-${id}`,
  notification_email: email,
  notification_filter: filter,
});

test('groups by address set and filter spec; splits a group whose pools need different filters', () => {
  const plan = buildPlan(
    [
      pool('1', 'a@x.io, b@x.io'),
      pool('2', 'B@x.io,a@x.io'),
      pool('3', 'a@x.io,b@x.io', { origin: { disable: true }, pool: { healthy: false } }),
      pool('4', ''),
      pool('5', 'q@x.io', { origin: { disable: true }, pool: { disable: true } }),
    ],
    none,
  );
  assert.equal(plan.legacy.length, 4);
  assert.deepEqual(
    plan.policies.map((p) => [p.action, p.addresses.join(), p.body.filters]),
    [
      [
        'create',
        'a@x.io,b@x.io',
        { pool_id: ['1', '2'], new_health: ['Healthy', 'Unhealthy'], event_source: ['origin', 'pool'] },
      ],
      ['create', 'a@x.io,b@x.io', { pool_id: ['3'], new_health: ['Unhealthy'], event_source: ['pool'] }],
    ],
  );
  const body = plan.policies[0]!.body;
  assert.deepEqual(body.mechanisms, { email: [{ id: 'a@x.io' }, { id: 'b@x.io' }] });
  assert.equal(body.alert_type, 'load_balancing_health_alert');
  assert.equal(markerOf({ id: 'x', description: body.description }), plan.policies[0]!.key);
  assert.equal(markerOf({ id: 'x', name: body.name }), plan.policies[0]!.key, 'the name carries the marker too');
});

test('an existing marked policy is kept when it covers the group, extended (PUT) when it does not', () => {
  const spec = filterSpecs(null)[0]!;
  const key = groupKey(['a@x.io'], spec);
  const existing: ApiPolicy = {
    id: 'pol-1',
    name: 'renamed by someone',
    description: policyDescription(key),
    enabled: true,
    alert_type: 'load_balancing_health_alert',
    mechanisms: { email: [{ id: 'a@x.io' }, { id: 'extra@x.io' }] },
    // pool 9 was cleared by an earlier run (still exists); pool 8 was deleted since
    filters: { pool_id: ['1', '8', '9'], new_health: ['Healthy', 'Unhealthy'], event_source: ['origin', 'pool'] },
  };
  const marked = { byKey: new Map([[key, existing]]), duplicates: [] };
  const pools = [pool('1', 'a@x.io'), pool('9', '')];
  const kept = buildPlan(pools, marked);
  assert.equal(kept.policies[0]!.action, 'keep');

  const grown = buildPlan([...pools, pool('2', 'a@x.io')], marked, { webhookId: 'hook' });
  const planned = grown.policies[0]!;
  assert.equal(planned.action, 'update');
  assert.deepEqual(planned.reasons, ['add the webhook', 'add 1 pool']);
  assert.deepEqual(planned.body.filters.pool_id, ['1', '2', '9'], 'cleared pools stay, deleted ones go');
  assert.equal(planned.body.name, 'renamed by someone');
  assert.deepEqual(planned.body.mechanisms, {
    email: [{ id: 'a@x.io' }, { id: 'extra@x.io' }],
    webhooks: [{ id: 'hook' }],
  });
});

test('a disabled or narrowed marked policy is widened and enabled again', () => {
  const spec = filterSpecs(null)[0]!;
  const key = groupKey(['a@x.io'], spec);
  const existing: ApiPolicy = {
    id: 'pol-1',
    description: `x switchyard-migration:${key}`,
    enabled: false,
    alert_type: 'load_balancing_health_alert',
    mechanisms: { email: [] },
    filters: { pool_id: ['1'], new_health: ['Unhealthy'] },
  };
  const plan = buildPlan([pool('1', 'a@x.io')], { byKey: new Map([[key, existing]]), duplicates: [] });
  const planned = plan.policies[0]!;
  assert.equal(planned.action, 'update');
  assert.deepEqual(planned.reasons, ['add recipients a@x.io', 'enable it', 'add new_health Healthy']);
  assert.equal(planned.body.enabled, true);
  assert.deepEqual(planned.body.filters, { pool_id: ['1'], new_health: ['Healthy', 'Unhealthy'] });
});

test('coverage is checked per (address, source, direction) across policies', () => {
  const triples = requiredTriples(['a@x.io'], filterSpecs({ origin: { healthy: false } }));
  const originOnly = coverageOf({
    id: 'p1',
    enabled: true,
    alert_type: 'load_balancing_health_alert',
    mechanisms: { email: [{ id: 'A@x.io' }] },
    filters: { pool_id: ['1'], event_source: ['origin'], new_health: ['Unhealthy'] },
  })!;
  const poolAll = coverageOf({
    id: 'p2',
    enabled: true,
    alert_type: 'load_balancing_health_alert',
    mechanisms: { email: [{ id: 'a@x.io' }] },
    filters: { event_source: ['pool'] }, // no pool_id: covers every pool
  })!;
  assert.equal(isCovered('1', triples, [originOnly]), false, 'pool events are missing');
  assert.equal(isCovered('1', triples, [originOnly, poolAll]), true);
  assert.equal(isCovered('2', triples, [originOnly, poolAll]), false, 'pool 2 is not in p1');
  assert.equal(isCovered('1', [], []), true, 'a pool whose email gets no alerts needs nothing');
  assert.equal(
    coverageOf({ id: 'p3', enabled: false, alert_type: 'load_balancing_health_alert' }),
    undefined,
    'a disabled policy covers nothing',
  );
});
