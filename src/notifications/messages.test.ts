import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deprecationNoticeEmail, policyAlertEmail, webhookBody } from './messages.js';

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

test('a name or reason stored with CR/LF cannot forge lines: every message shows it escaped on one line', () => {
  const event = {
    seq: 1,
    id: 'e1',
    account_id: input.accountId,
    event_source: 'origin' as const,
    pool_id: 'p1',
    pool_name: 'main',
    origin_name: 'node-a\r\nBcc: victim@example.com',
    origin_address: 'http://10.0.0.1:8545\n/x',
    previous: 'Healthy' as const,
    new_health: 'Unhealthy' as const,
    reason: 'eth_chainId returned "\u0085Reason: all good\u2028"',
    occurred_at: '2026-03-01T12:00:00.000Z',
  };
  const ctx = { event, alertEvent: 'ALERT_STATE_EVENT_START' as const, correlationId: 'c1' };
  const mail = policyAlertEmail(ctx, { id: 'pol', name: 'paging\nSubject: fake' }, input.apiBase);
  assert.equal(
    mail.subject,
    '[Switchyard] Origin node-a\\u000d\\u000aBcc: victim@example.com (pool main) is Unhealthy',
  );
  assert.ok(!/^Bcc:/m.test(mail.text) && !/^Subject:/m.test(mail.text) && !/^Reason: all good/m.test(mail.text));
  assert.ok(mail.text.includes('node-a\\u000d\\u000aBcc: victim@example.com'));
  assert.ok(mail.text.includes('\\u0085Reason: all good\\u2028'));
  assert.ok(mail.text.includes('"paging\\u000aSubject: fake"'));
  const hook = JSON.parse(webhookBody(ctx, { id: 'pol', name: 'n', account_id: input.accountId })) as {
    text: string;
    data: { origin_name: string; origin_address: string };
  };
  assert.ok(!hook.text.includes('\n') && !hook.text.includes('\r'), 'the webhook text is one line');
  assert.equal(hook.data.origin_name, event.origin_name, 'structured data keeps the value (JSON escapes it)');
  assert.ok(!hook.data.origin_address.includes('\n'));
  // Every line of the text is one of the template's lines: none starts with a forged header.
  assert.ok(mail.text.split('\n').every((line) => !line.includes('\r')));
});
