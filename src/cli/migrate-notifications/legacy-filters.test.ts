import assert from 'node:assert/strict';
import { test } from 'node:test';
import { filterSpecs, normaliseAddresses, requiredTriples } from './legacy-filters.js';

test('notification_filter → policy filter specs (Cloudflare semantics)', () => {
  const both = ['Healthy', 'Unhealthy'];
  const cases: Array<[Parameters<typeof filterSpecs>[0], unknown]> = [
    [null, [{ event_source: ['origin', 'pool'], new_health: both }]],
    [undefined, [{ event_source: ['origin', 'pool'], new_health: both }]],
    [{}, [{ event_source: ['origin', 'pool'], new_health: both }]],
    [{ origin: null, pool: { healthy: null } }, [{ event_source: ['origin', 'pool'], new_health: both }]],
    [{ origin: { disable: true } }, [{ event_source: ['pool'], new_health: both }]],
    [{ pool: { disable: true, healthy: true } }, [{ event_source: ['origin'], new_health: both }]],
    [
      { origin: { healthy: false }, pool: { healthy: false } },
      [{ event_source: ['origin', 'pool'], new_health: ['Unhealthy'] }],
    ],
    [{ origin: { disable: true }, pool: { healthy: true } }, [{ event_source: ['pool'], new_health: ['Healthy'] }]],
    [
      { origin: { disable: false, healthy: true } },
      [
        { event_source: ['origin'], new_health: ['Healthy'] },
        { event_source: ['pool'], new_health: both },
      ],
    ],
    [{ origin: { disable: true }, pool: { disable: true } }, []],
  ];
  for (const [filter, expected] of cases) assert.deepEqual(filterSpecs(filter), expected, JSON.stringify(filter));
});

test('addresses are compared as a normalised set', () => {
  assert.deepEqual(normaliseAddresses(' B@Example.com,a@example.com , b@example.com,'), [
    'a@example.com',
    'b@example.com',
  ]);
  assert.deepEqual(normaliseAddresses(''), []);
  assert.deepEqual(normaliseAddresses(null), []);
});

test('required triples: every address × source × direction', () => {
  assert.deepEqual(requiredTriples(['a@x.io'], filterSpecs({ origin: { disable: true }, pool: { healthy: false } })), [
    'a@x.io|pool|Unhealthy',
  ]);
  assert.equal(requiredTriples(['a@x.io', 'b@x.io'], filterSpecs(null)).length, 8);
});
