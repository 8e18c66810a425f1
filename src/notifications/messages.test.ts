import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deprecationNoticeEmail } from './messages.js';

const input = {
  accountId: '0123456789abcdef0123456789abcdef',
  address: 'ops@example.com',
  legacyPoolCount: 3,
  intervalMs: 86_400_000,
  apiBase: 'http://127.0.0.1:8787/client/v4',
};

test('a deprecation notice names the pools, the policy step, the page-by-page PATCH and the interval', () => {
  const mail = deprecationNoticeEmail({ ...input, pools: ['a', 'b'] });
  assert.match(mail.subject, /Action needed: per-pool notification email is deprecated/);
  for (const fact of ['  - a\n  - b\n', 'alerting/v3/policies', '"notification_email": ""', 'page=2', '24 hours']) {
    assert.ok(mail.text.includes(fact), `mentions ${JSON.stringify(fact)}`);
  }
});

test('a long pool list is cut after 50 names, saying how many more there are', () => {
  const pools = Array.from({ length: 120 }, (_, i) => `pool-${String(i).padStart(3, '0')}`);
  const mail = deprecationNoticeEmail({ ...input, pools, legacyPoolCount: 120 });
  assert.ok(mail.text.includes('  - pool-049\n'));
  assert.ok(!mail.text.includes('pool-050'));
  assert.match(mail.text, /… and 70 more/);
});
