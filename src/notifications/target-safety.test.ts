import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkResolvedHost, checkWebhookUrl, refusalReason, TargetRefusedError } from './target-safety.js';
import { WebhookClient } from './webhook.js';

const open = { denyPrivate: false };
const strict = { denyPrivate: true };

test('link-local and cloud metadata addresses are always refused, in every spelling', () => {
  for (const address of [
    '169.254.169.254',
    '169.254.0.1',
    'fe80::1',
    'febf::1',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    '100.100.100.200',
    'fd00:ec2::254',
    '168.63.129.16',
    '224.0.0.1',
  ]) {
    assert.ok(refusalReason(address, open), `${address} refused`);
  }
  for (const url of [
    'http://169.254.169.254/latest/meta-data/',
    'http://[fe80::1]/',
    'http://[::ffff:169.254.169.254]/',
    'http://2852039166/', // 169.254.169.254 as one decimal number
    'http://0xa9.0xfe.0xa9.0xfe/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://METADATA.GOOGLE.INTERNAL./',
  ]) {
    assert.throws(() => checkWebhookUrl(url, open), TargetRefusedError, url);
  }
});

test('private ranges are allowed by default and refused with webhooks.deny_private', () => {
  for (const address of [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '100.64.0.1',
    '::1',
    'fd12::1',
    '0.0.0.0',
  ]) {
    assert.equal(refusalReason(address, open), undefined, `${address} allowed by default`);
    assert.match(refusalReason(address, strict) ?? '', /deny_private/, `${address} refused when denied`);
  }
  assert.equal(refusalReason('::ffff:10.0.0.1', open), undefined);
  assert.ok(refusalReason('::ffff:10.0.0.1', strict));
  for (const address of ['8.8.8.8', '2606:4700::1111', '172.32.0.1']) {
    assert.equal(refusalReason(address, strict), undefined, `${address} is public`);
  }
});

test('only absolute http(s) URLs', () => {
  assert.equal(checkWebhookUrl('https://hooks.example.com/x?y=1', strict).hostname, 'hooks.example.com');
  for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'not a url', '/relative']) {
    assert.throws(() => checkWebhookUrl(url, open), TargetRefusedError, url);
  }
});

test('resolved addresses are checked too: a name resolving to a refused address is refused at connect', async () => {
  await assert.rejects(checkResolvedHost('localhost', strict), /deny_private/);
  await checkResolvedHost('localhost', open);
  const client = new WebhookClient({ denyPrivate: true, timeoutMs: 2_000 });
  try {
    const result = await client.post({
      url: 'http://localhost:9/x',
      body: '{}',
      messageId: 'msg_1',
      secret: null,
      timestamp: 1,
    });
    assert.equal(result.ok, false);
    assert.ok(
      !result.ok && result.refused === true && /localhost resolves to/.test(result.error),
      JSON.stringify(result),
    );
  } finally {
    await client.close();
  }
});
