/**
 * Monitor probes and the outbound target policy, on the probe transport of one pool's account: literal
 * targets and redirect hops are checked before anything is sent, names on every resolved address at
 * connect time; a refusal is a failed check, not retried, whose reason starts "target not allowed:".
 * The origin is a real local server; DNS answers come from a resolver the test sets.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../src/clock.js';
import { checkOrigin } from '../../src/health/probes/check.js';
import { ProbeTransport } from '../../src/health/probes/transport.js';
import { withMonitorDefaults } from '../../src/model/monitor-schema.js';
import { OutboundPolicy } from '../../src/outbound/policy.js';
import { TestOrigin } from './test-origin.js';

const ROUTING = 'a'.repeat(32);
const TENANT = 'b'.repeat(32);
const answers: Record<string, string[]> = { 'node.example': ['127.0.0.1'] };
const outbound = new OutboundPolicy({
  trustedAccounts: [ROUTING],
  resolve: async (name) => (answers[name] ?? []).map((address) => ({ address, family: 4 as const })),
});
const origin = (address: string) => ({ name: 'o', address, enabled: true, weight: 1, header: {} });

describe('probe targets', () => {
  const transport = new ProbeTransport({ outbound, clock: systemClock });
  let server: TestOrigin;
  before(async () => {
    server = await TestOrigin.start();
  });
  after(async () => {
    await transport.close();
    await server.down();
  });

  for (const type of ['http', 'jsonrpc'] as const) {
    it(`${type}: a tenant's probe of loopback is refused by address and by resolved name, never sent nor retried`, async () => {
      const monitor = withMonitorDefaults({ type, retries: 2, timeout: 2 });
      const tenant = transport.forAccount(TENANT);
      const before = server.requests.length;
      const literal = await checkOrigin(tenant, origin(`http://127.0.0.1:${server.port}/`), monitor, []);
      assert.equal(literal.ok, false);
      assert.match(
        literal.failure_reason,
        /^target not allowed: host 127\.0\.0\.1 is a loopback address \(allowed only for accounts in outbound\.trusted_accounts\)$/,
      );
      const named = await checkOrigin(tenant, origin(`http://node.example:${server.port}/`), monitor, []);
      assert.match(
        named.failure_reason,
        /^target not allowed: node\.example resolves to 127\.0\.0\.1, a loopback address/,
      );
      assert.doesNotMatch(named.failure_reason, /attempts/, 'a refusal is not retried');
      assert.equal(server.requests.length, before, 'nothing reached the origin');

      // The routing account's probes reach the same origin, by address and by name.
      const routing = transport.forAccount(ROUTING);
      server.set({});
      const ok = await checkOrigin(routing, origin(`http://node.example:${server.port}/`), monitor, []);
      assert.equal(ok.ok, true, ok.failure_reason);
    });
  }

  it('a redirect hop to an always-refused target fails the check, even for the routing account', async () => {
    const monitor = withMonitorDefaults({ type: 'http', follow_redirects: true, timeout: 2 });
    const routing = transport.forAccount(ROUTING);
    for (const [location, reason] of [
      [
        'http://169.254.169.254/latest/meta-data/',
        /host 169\.254\.169\.254 is a link-local address \(always refused\)/,
      ],
      ['http://[fe80::1]/', /host fe80::1 is a link-local address/],
      ['http://0xa9.0xfe.0xa9.0xfe/', /host 169\.254\.169\.254 is a link-local address/], // hex IPv4
      ['ftp://example.com/', /scheme ftp \(only http, https\)/],
    ] as const) {
      server.set({ status: 302, location });
      const result = await checkOrigin(routing, origin(server.url), monitor, []);
      assert.equal(result.ok, false, location);
      assert.match(result.failure_reason, /^target not allowed: /, location);
      assert.match(result.failure_reason, reason, location);
    }
  });
});
