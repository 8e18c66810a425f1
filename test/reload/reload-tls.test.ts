/**
 * Certificate rotation on reload (SPEC §15): the gateway and the API serve TLS from files (`gateway.tls`,
 * `api.tls`, certificates made by the real `openssl`); new files are copied over the old ones and the
 * config reloaded unchanged.
 * - New TLS connections get the new certificate, on both listeners; a keep-alive connection opened before
 *   keeps working (it keeps the certificate it was opened with).
 * - A certificate and key that do not belong together fail the reload: nothing changes (connections
 *   still get the certificate in force) and the failure is counted, naming `gateway.tls`.
 * - Turning TLS off needs a restart: reported, and the listener keeps serving TLS.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import tls from 'node:tls';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { makeSelfSignedCert, type SelfSignedCert } from '../helpers/tls.js';

/** The SHA-256 fingerprint of the certificate a new TLS connection to `url` is shown. */
function servedCertificate(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: hostname, port: Number(port), rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.on('error', reject);
  });
}

/** The fingerprint of a PEM certificate file, as a TLS peer shows it. */
function fingerprintOf(cert: SelfSignedCert): Promise<string> {
  const server = tls.createServer({ cert: readFileSync(cert.cert), key: readFileSync(cert.key) });
  return new Promise((resolve, reject) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      servedCertificate(`https://127.0.0.1:${port}`)
        .then(resolve, reject)
        .finally(() => server.close());
    });
  });
}

/** A JSON-RPC call over `agent` (one keep-alive socket): the status and the socket's certificate. */
function callOver(agent: https.Agent, url: string): Promise<{ status: number; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { method: 'POST', agent, rejectUnauthorized: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        const fingerprint = (res.socket as tls.TLSSocket).getPeerCertificate().fingerprint256;
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, fingerprint }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }));
  });
}

describe('reload re-reads the TLS certificate and key files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-reload-tls-'));
  const live = { cert_file: join(dir, 'live', 'cert.pem'), key_file: join(dir, 'live', 'key.pem') };
  const certs: SelfSignedCert[] = [];
  const prints: string[] = [];
  let node: AnvilNode | undefined;
  let app: TestApp;
  let raw: Record<string, unknown>;

  const install = (cert: SelfSignedCert, key = cert) => {
    copyFileSync(cert.cert, live.cert_file);
    copyFileSync(key.key, live.key_file);
  };

  before(async () => {
    mkdirSync(join(dir, 'live'));
    for (const name of ['one', 'two']) {
      mkdirSync(join(dir, name));
      const cert = makeSelfSignedCert(join(dir, name), `/CN=${name}`, '127.0.0.1');
      certs.push(cert);
      prints.push(await fingerprintOf(cert));
    }
    install(certs[0] as SelfSignedCert);
    node = await startTestAnvil();
    raw = {
      gateway: { tls: live },
      api: { tls: live },
      networks: { sepolia: { chain_id: 11155111, pools: ['main'] } },
      pools: [poolOf('main', [node.url])],
    };
    app = await startApp(raw);
  });
  after(async () => {
    await app?.close();
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('new connections get the new certificate; a connection opened before keeps working', async () => {
    assert.notEqual(prints[0], prints[1]);
    assert.equal(await servedCertificate(app.gatewayUrl), prints[0]);
    assert.equal(await servedCertificate(app.apiUrl), prints[0]);
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      assert.deepEqual(await callOver(agent, app.rpcUrl()), { status: 200, fingerprint: prints[0] });
      install(certs[1] as SelfSignedCert);
      const outcome = await app.reloadWith(raw);
      assert.deepEqual(outcome, { ok: true, changed: [], kept: [] });
      assert.equal(await servedCertificate(app.gatewayUrl), prints[1], 'the gateway serves the new certificate');
      assert.equal(await servedCertificate(app.apiUrl), prints[1], 'the API serves the new certificate');
      assert.deepEqual(await callOver(agent, app.rpcUrl()), { status: 200, fingerprint: prints[0] });
    } finally {
      agent.destroy();
    }
  });

  it('a certificate and key that do not belong together change nothing', async () => {
    install(certs[0] as SelfSignedCert, certs[1] as SelfSignedCert);
    const outcome = await app.reloadWith(raw);
    assert.equal(outcome.ok, false);
    assert.deepEqual(outcome.ok ? [] : outcome.errors.map((problem) => problem.path), ['gateway.tls', 'api.tls']);
    assert.equal(await servedCertificate(app.gatewayUrl), prints[1]);
    assert.equal(await servedCertificate(app.apiUrl), prints[1]);
  });

  it('turning TLS off needs a restart: the listener keeps serving TLS', async () => {
    install(certs[1] as SelfSignedCert);
    const outcome = await app.reloadWith({ ...raw, gateway: {} });
    assert.deepEqual(outcome.ok && outcome.kept, ['gateway.tls']);
    assert.equal(await servedCertificate(app.gatewayUrl), prints[1]);
  });
});
