import assert from 'node:assert/strict';
import { test } from 'node:test';
import { legacyFilterAllows, policyMatches } from './matching.js';
import type { Policy } from './queries/alert-policies.js';

const event = { pool_id: 'p1', new_health: 'Unhealthy', event_source: 'origin' } as const;

function policy(filters: Record<string, string[]>, overrides: Partial<Policy> = {}): Policy {
  return {
    id: 'x',
    account_id: 'a',
    name: 'n',
    description: '',
    enabled: true,
    alert_type: 'load_balancing_health_alert',
    mechanisms: {},
    filters,
    alert_interval: null,
    created: '',
    modified: '',
    ...overrides,
  };
}

test('omitted filters match everything; present filters must all contain the value', () => {
  assert.ok(policyMatches(policy({}), event));
  assert.ok(
    policyMatches(policy({ pool_id: ['p0', 'p1'], new_health: ['Unhealthy'], event_source: ['origin'] }), event),
  );
  assert.ok(!policyMatches(policy({ pool_id: ['p2'] }), event));
  assert.ok(!policyMatches(policy({ new_health: ['Healthy'] }), event));
  assert.ok(!policyMatches(policy({ event_source: ['pool'] }), event));
  assert.ok(!policyMatches(policy({}, { enabled: false }), event));
  assert.ok(!policyMatches(policy({}, { alert_type: 'other_alert' }), event));
});

test('legacy notification_filter follows Cloudflare semantics per event source', () => {
  const healthy = { ...event, new_health: 'Healthy' } as const;
  const pool = { ...event, event_source: 'pool' } as const;
  assert.ok(legacyFilterAllows(null, event));
  assert.ok(legacyFilterAllows({ origin: { healthy: null } }, event));
  assert.ok(legacyFilterAllows({ origin: { healthy: null } }, healthy));
  assert.ok(!legacyFilterAllows({ origin: { disable: true } }, event));
  assert.ok(!legacyFilterAllows({ origin: { disable: true, healthy: false } }, event));
  assert.ok(legacyFilterAllows({ origin: { disable: true } }, pool), 'the origin rule does not touch pool events');
  assert.ok(!legacyFilterAllows({ origin: { healthy: true } }, event));
  assert.ok(legacyFilterAllows({ origin: { healthy: true } }, healthy));
  assert.ok(legacyFilterAllows({ origin: { healthy: false } }, event));
  assert.ok(!legacyFilterAllows({ origin: { healthy: false } }, healthy));
  assert.ok(!legacyFilterAllows({ pool: { healthy: true } }, pool));
});
