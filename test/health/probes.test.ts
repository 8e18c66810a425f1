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
import { withMonitorDefaults } from '../../src/health/monitor-schema.js';
import { checkOrigin } from '../../src/health/probes/check.js';
import { matchesExpectedCodes } from '../../src/health/probes/expected-codes.js';
import { ProbeTransport } from '../../src/health/probes/transport.js';
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
  const transport = new ProbeTransport();
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
