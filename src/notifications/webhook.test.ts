import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { OutboundPolicy } from '../outbound/policy.js';
import { WebhookClient } from './webhook.js';

const TRUSTED = 'a'.repeat(32);
const TENANT = 'b'.repeat(32);

test('webhook targets follow the outbound policy of the destination account, at the URL and at connect time', async () => {
  let received = 0;
  const server = createServer((req, res) => {
    received += 1;
    req.resume();
    res.end('ok');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  // hooks.example passes the URL check (a name) and resolves to the local receiver at connect time.
  const outbound = new OutboundPolicy({
    trustedAccounts: [TRUSTED],
    resolve: async (name) => (name === 'hooks.example' ? [{ address: '127.0.0.1', family: 4 }] : []),
  });
  const open = new WebhookClient({ outbound, denyPrivate: false, timeoutMs: 2_000 });
  const strict = new WebhookClient({ outbound, denyPrivate: true, timeoutMs: 2_000 });
  const post = (client: WebhookClient, accountId: string, url: string) =>
    client.post({ accountId, url, body: '{}', messageId: 'msg_1', secret: null, timestamp: 1 });
  try {
    // the trusted (routing) account reaches a loopback receiver, by address and by name
    assert.deepEqual(await post(open, TRUSTED, `http://127.0.0.1:${port}/x`), { ok: true, status: 200 });
    assert.deepEqual(await post(open, TRUSTED, `http://hooks.example:${port}/x`), { ok: true, status: 200 });
    assert.equal(received, 2);

    const refusals = [
      await post(open, TENANT, `http://127.0.0.1:${port}/x`), // literal: the URL check
      await post(open, TENANT, `http://[::ffff:127.0.0.1]:${port}/x`),
      await post(open, TENANT, `http://hooks.example:${port}/x`), // name: the connect-time lookup
      await post(strict, TRUSTED, `http://hooks.example:${port}/x`), // deny_private, even trusted
      await post(open, TRUSTED, 'http://169.254.169.254/latest/meta-data/'), // always
    ];
    for (const result of refusals) {
      assert.ok(!result.ok && result.refused === true, JSON.stringify(result));
      assert.match(result.error, /^target not allowed: /);
    }
    assert.match(
      refusals[2]?.ok === false ? refusals[2].error : '',
      /hooks\.example resolves to 127\.0\.0\.1, a loopback/,
    );
    assert.match(refusals[3]?.ok === false ? refusals[3].error : '', /webhooks\.deny_private/);
    assert.equal(received, 2, 'no refused attempt reached the receiver');
  } finally {
    await open.close();
    await strict.close();
    server.close();
  }
});
