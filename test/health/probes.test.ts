/**
 * Probe details against real local servers: headers (origin's, then the monitor's), the https monitor
 * with and without `allow_insecure` against a self-signed certificate (made with openssl for this run),
 * and `expected_codes` patterns.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../src/clock.js';
import { checkOrigin } from '../../src/health/probes/check.js';
import { matchesExpectedCodes } from '../../src/health/probes/expected-codes.js';
import { ProbeTransport } from '../../src/health/probes/transport.js';
import { withMonitorDefaults } from '../../src/model/monitor-schema.js';
import { OutboundPolicy } from '../../src/outbound/policy.js';
import { makeSelfSignedCert } from '../helpers/tls.js';
import { TestOrigin } from './test-origin.js';

const origin = (address: string, header: Record<string, string[]> = {}) => ({
  name: 'o',
  address,
  enabled: true,
  weight: 1,
  header,
});

describe('probes', () => {
  const transport = new ProbeTransport({ outbound: new OutboundPolicy({ trustedAccounts: [] }), clock: systemClock });
  after(() => transport.close());

  it('matches expected_codes patterns', () => {
    const table: Array<[number, string, boolean]> = [
      [200, '200', true],
      [204, '2xx', true],
      [301, '200,301', true],
      [302, '30x', true],
      [310, '30x', false],
      [503, '2xx', false],
      [503, '5XX', true],
    ];
    for (const [status, expected, ok] of table)
      assert.equal(matchesExpectedCodes(status, expected), ok, `${status} ${expected}`);
  });

  it("sends the origin's headers, then the monitor's on top, and the method and path", async () => {
    const server = await TestOrigin.start();
    try {
      const monitor = withMonitorDefaults({
        type: 'http',
        method: 'HEAD',
        path: '/status?x=1',
        header: { Host: ['node.example'] },
      });
      const result = await checkOrigin(
        transport,
        origin(server.url, { host: ['ignored.example'], 'x-origin': ['yes'] }),
        monitor,
        [],
      );
      assert.equal(result.ok, true, result.failure_reason);
      const seen = server.requests[0];
      assert.equal(seen?.method, 'HEAD');
      assert.equal(seen?.url, '/status?x=1');
      assert.equal(seen?.headers.host, 'node.example');
      assert.equal(seen?.headers['x-origin'], 'yes');
    } finally {
      await server.down();
    }
  });

  it('jsonrpc: the stored path and query as is, Basic auth and JSON headers, as the gateway sends them', async () => {
    const server = await TestOrigin.start();
    try {
      const monitor = withMonitorDefaults({ type: 'jsonrpc', retries: 0 });
      const basic = `Basic ${Buffer.from('apiuser:pa ss').toString('base64')}`;
      const table: Array<[string, string, string | undefined]> = [
        [
          `http://apiuser:pa%20ss@127.0.0.1:${server.port}/v3/${'ab'.repeat(16)}?apikey=K`,
          `/v3/${'ab'.repeat(16)}?apikey=K`,
          basic,
        ],
        [`http://127.0.0.1:${server.port}?x=1`, '/?x=1', undefined],
        [`127.0.0.1:${server.port}`, '/', undefined],
      ];
      for (const [address, path, authorization] of table) {
        server.requests = [];
        const result = await checkOrigin(transport, origin(address, { 'X-Api-Key': ['k1'] }), monitor, []);
        assert.equal(result.ok, true, result.failure_reason);
        assert.equal(server.requests.length, 3, address);
        for (const seen of server.requests) {
          assert.equal(seen.url, path, address);
          assert.equal(seen.headers.authorization, authorization, address);
          assert.equal(seen.headers['x-api-key'], 'k1');
          assert.equal(seen.headers['content-type'], 'application/json');
          assert.equal(seen.headers.accept, 'application/json');
          assert.equal(seen.headers.host, `127.0.0.1:${server.port}`);
        }
      }
    } finally {
      await server.down();
    }
  });

  it("the origin's secrets go only to its own scheme, host and port (monitor port, redirects)", async () => {
    const home = await TestOrigin.start();
    const elsewhere = await TestOrigin.start();
    try {
      const keyed = origin(`http://apiuser:pw@127.0.0.1:${home.port}/v3/key`, {
        'X-Api-Key': ['origin-secret'],
        'X-Trace': ['plain'],
      });
      const same = await checkOrigin(transport, keyed, withMonitorDefaults({ type: 'http', path: '/health' }), []);
      assert.equal(same.ok, true, same.failure_reason);
      assert.equal(home.requests.at(-1)?.url, '/health');
      assert.equal(
        home.requests.at(-1)?.headers.authorization,
        `Basic ${Buffer.from('apiuser:pw').toString('base64')}`,
      );
      assert.equal(home.requests.at(-1)?.headers['x-api-key'], 'origin-secret');

      const otherPort = await checkOrigin(
        transport,
        keyed,
        withMonitorDefaults({ type: 'jsonrpc', port: elsewhere.port, retries: 0 }),
        [],
      );
      assert.equal(otherPort.ok, true, otherPort.failure_reason);
      for (const seen of elsewhere.requests) {
        assert.equal(seen.headers.authorization, undefined);
        assert.equal(seen.headers['x-api-key'], undefined);
        assert.equal(seen.headers['x-trace'], 'plain');
      }

      elsewhere.requests = [];
      home.set({ location: `http://127.0.0.1:${elsewhere.port}/landed` });
      const redirected = await checkOrigin(
        transport,
        keyed,
        withMonitorDefaults({
          type: 'http',
          path: '/moved',
          follow_redirects: true,
          header: { Authorization: ['Bearer monitor-secret'] },
        }),
        [],
      );
      assert.equal(redirected.ok, true, redirected.failure_reason);
      assert.equal(home.requests.at(-1)?.headers.authorization, 'Bearer monitor-secret');
      const landed = elsewhere.requests.at(-1);
      assert.equal(landed?.url, '/landed');
      assert.equal(landed?.headers.authorization, undefined);
      assert.equal(landed?.headers['x-api-key'], undefined);
      assert.equal(landed?.headers['x-trace'], 'plain');
    } finally {
      await home.down();
      await elsewhere.down();
    }
  });

  describe('https with a self-signed certificate', () => {
    let dir: string;
    let server: ReturnType<typeof createServer>;
    let port: number;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'switchyard-tls-'));
      const pem = makeSelfSignedCert(dir, '/CN=127.0.0.1');
      server = createServer({ key: readFileSync(pem.key), cert: readFileSync(pem.cert) }, (_req, res) =>
        res.end('secure ok'),
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    after(async () => {
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    });

    it('fails certificate verification unless allow_insecure', async () => {
      const address = `127.0.0.1:${port}`;
      const strict = await checkOrigin(
        transport,
        origin(address),
        withMonitorDefaults({ type: 'https', retries: 0 }),
        [],
      );
      assert.equal(strict.ok, false);
      assert.match(strict.failure_reason, /^TLS error: /);
      const insecure = await checkOrigin(
        transport,
        origin(address),
        withMonitorDefaults({ type: 'https', allow_insecure: true, expected_body: 'SECURE' }),
        [],
      );
      assert.equal(insecure.ok, true, insecure.failure_reason);
      assert.equal(insecure.response_code, 200);
    });
  });
});
