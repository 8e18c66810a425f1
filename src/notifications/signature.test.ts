import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { signingKey, signWebhook, verifyWebhook } from './signature.js';

test('whsec_ secrets are base64-decoded into the key, as the Standard Webhooks libraries do', () => {
  const key = Buffer.from('0123456789abcdef0123456789abcdef');
  const secret = `whsec_${key.toString('base64')}`;
  assert.deepEqual(signingKey(secret), key);
  const expected = createHmac('sha256', key).update('msg_1.1700000000.{"a":1}').digest('base64');
  assert.equal(signWebhook('msg_1', 1_700_000_000, '{"a":1}', secret), `v1,${expected}`);
});

test("reproduces the published Standard Webhooks test vector, so receivers' libraries accept it", () => {
  // The vector used by the reference libraries' own tests (secret, id, timestamp, body → signature).
  const signature = signWebhook(
    'msg_p5jXN8AQM9LWM0D4loKWxJek',
    1_614_265_330,
    '{"test": 2432232314}',
    'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  );
  assert.equal(signature, 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
});

test('other secrets are used as their UTF-8 bytes', () => {
  const expected = createHmac('sha256', 'plain secret').update('msg_2.5.body').digest('base64');
  assert.equal(signWebhook('msg_2', 5, 'body', 'plain secret'), `v1,${expected}`);
});

test('verification accepts any matching signature in the list and enforces the tolerance', () => {
  const signature = `v1,bogus ${signWebhook('id', 100, 'b', 's')}`;
  assert.ok(verifyWebhook({ id: 'id', timestamp: '100', signature, body: 'b', secret: 's' }));
  assert.ok(
    verifyWebhook({
      id: 'id',
      timestamp: '100',
      signature,
      body: 'b',
      secret: 's',
      nowSeconds: 400,
      toleranceSeconds: 300,
    }),
  );
  assert.ok(
    !verifyWebhook({
      id: 'id',
      timestamp: '100',
      signature,
      body: 'b',
      secret: 's',
      nowSeconds: 401,
      toleranceSeconds: 300,
    }),
  );
  assert.ok(!verifyWebhook({ id: 'id2', timestamp: '100', signature, body: 'b', secret: 's' }));
  assert.ok(!verifyWebhook({ id: 'id', timestamp: '1e2', signature, body: 'b', secret: 's' }));
});
