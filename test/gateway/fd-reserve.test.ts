/**
 * The file-descriptor reserve (SPEC §8): `serve` under `ulimit -n 300` lowers gateway.max_connections
 * at start (a warning names the new limit: 300 − (64 + (64 + 2 + 2) × 1 origin endpoint) = 168: the gateway's
 * connections, the chain tracker's and the transaction ledger's), so 320 idle
 * gateway connections leave the management API answering, and the gateway answers again on a fresh
 * connection once the idle ones are gone. Runs the built CLI (dist/, `npm run build`) under `sh -c
 * 'ulimit -n 300 && exec node bin/switchyard.js serve …'`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/cli.js';
import { post, startHttpServer } from '../helpers/http.js';
import { waitFor } from '../http1/servers.js';
import { callOn, idleConnection, SMALL_CALL } from './starvation-fixtures.js';

describe('the file-descriptor reserve', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('under a 300-descriptor limit, 320 idle gateway connections leave the API and the gateway answering', async () => {
    const origin = await startHttpServer((_req, res, body) => {
      const id = /"id"\s*:\s*(-?\d+)/.exec(body)?.[1] ?? 'null';
      const answer = `{"jsonrpc":"2.0","id":${id},"result":"0x10"}`;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
      res.end(answer);
    });
    cleanups.push(() => origin.close());
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-fd-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const configPath = join(dir, 'config.yaml');
    writeFileSync(
      configPath,
      [
        `data_dir: ${join(dir, 'data')}`,
        'gateway: { listen: "127.0.0.1:0" }',
        'api: { listen: "127.0.0.1:0" }',
        'networks:',
        '  sepolia: { chain_id: 11155111, pools: [one] }',
        'pools:',
        `  - { name: one, origins: [{ name: o0, address: "${origin.url}" }] }`,
        '',
      ].join('\n'),
    );
    const child = spawn(
      'sh',
      ['-c', `ulimit -n 300 && exec "${process.execPath}" bin/switchyard.js serve --config "${configPath}"`],
      { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    cleanups.push(async () => {
      child.kill('SIGTERM'); // by this child's PID only
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    });
    const logs: Array<Record<string, unknown>> = [];
    let partial = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        try {
          logs.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          logs.push({ msg: line });
        }
      }
    });
    await waitFor(() => logs.some((line) => line.msg === 'switchyard started'), 'serve to start', 30_000);
    const started = logs.find((line) => line.msg === 'switchyard started') as { gateway: string; api: string };
    const warning = logs.find((line) => String(line.msg).startsWith('gateway.max_connections lowered to'));
    assert.ok(warning, 'a start-up warning about the lowered connection limit');
    assert.equal(warning.level, 'warn');
    assert.equal(warning.max_connections, 168);
    assert.equal(warning.fd_limit, 300);
    assert.match(String(warning.msg), /lowered to 168/);

    const rpcUrl = `${started.gateway}/v1/sepolia`;
    const metricsUrl = `${new URL(started.api).origin}/metrics`;
    const idle = Array.from({ length: 320 }, () => idleConnection(started.gateway));
    cleanups.push(() => {
      for (const c of idle) c.socket.destroy();
    });
    // Every connection is accepted, and those over the limit are closed again by the gateway.
    await waitFor(() => idle.every((c) => c.connected || c.closed), 'the 320 connections to be handled', 20_000);
    await waitFor(
      () => idle.filter((c) => c.closed).length >= 320 - 168,
      'connections over the limit to be closed',
      20_000,
    );
    assert.equal(idle.filter((c) => !c.closed).length, 168);

    // The API keeps answering while the gateway's share is in use.
    for (let i = 0; i < 5; i += 1) {
      const res = await fetch(metricsUrl);
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.match(text, /switchyard_gateway_connections_refused_total\{limit="max_connections"\} 152/);
    }
    // One of the open idle connections is still served.
    const open = idle.find((c) => !c.closed);
    assert.ok(open);
    assert.equal(await callOn(open.socket, rpcUrl, SMALL_CALL), 200);

    // The idle connections go; a fresh connection gets its answer.
    for (const c of idle) c.socket.destroy();
    let status = 0;
    for (let attempt = 0; attempt < 100 && status !== 200; attempt += 1) {
      status = await post(rpcUrl, SMALL_CALL).then(
        (res) => res.status,
        () => 0,
      );
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50)); // pacing the retries
    }
    assert.equal(status, 200);
  });
});
