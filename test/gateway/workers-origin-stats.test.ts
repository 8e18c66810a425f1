/**
 * Per-origin statistics with gateway workers (SPEC §13: "summed over workers and instances"): `serve` with
 * `gateway.workers: 2` in front of a real anvil; calls on fresh connections (node:cluster hands them to
 * both workers); every one of them is counted in `GET …/load_balancers/origin_stats` — the workers report
 * their counts to the control process, which flushes them to the store (only workers serve the gateway,
 * so a count there can only have come that way). Then SIGTERM: a clean exit.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { type CliProcess, runCli, spawnCli } from '../helpers/cli.js';

const ACCOUNT = '5317c4a1d00d5317c4a1d00d5317c4a1';
const dir = mkdtempSync(join(tmpdir(), 'switchyard-worker-stats-'));
let anvil: AnvilNode | undefined;
let proc: CliProcess | undefined;

after(async () => {
  proc?.kill('SIGKILL');
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** One call on a connection of its own (agent: false), so node:cluster spreads them over the workers. */
function freshCall(url: string, id: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'eth_getBalance',
      params: [`0x${'3'.repeat(40)}`, 'latest'],
    });
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('origin statistics with gateway workers', () => {
  it('counts every call made through either worker', async () => {
    anvil = await startTestAnvil();
    const config = join(dir, 'serve.yaml');
    writeFileSync(
      config,
      [
        `data_dir: ${join(dir, 'data')}`,
        'gateway: { listen: "127.0.0.1:0", workers: 2 }',
        'api: { listen: "127.0.0.1:0" }',
        'networks: { sepolia: { chain_id: 31337, pools: [main] } }',
        'pools:',
        `  - { name: main, origins: [{ name: a, address: "${anvil.url}" }] }`,
        '',
      ].join('\n'),
    );
    proc = spawnCli(['serve', '--config', config]);
    await proc.waitForLog((line) => line.msg === 'gateway workers serving', 60_000);
    const started = await proc.waitForLog((line) => line.msg === 'switchyard started', 60_000);
    const made = await runCli(['token', 'create', '--account', ACCOUNT, '--read-only', '--config', config]);
    assert.equal(made.code, 0, made.stderr);
    const token = made.stdout.trim();

    const calls = 30;
    for (let i = 0; i < calls; i += 1) assert.equal(await freshCall(`${started.gateway}/v1/sepolia`, i), 200);

    const deadline = Date.now() + 15_000;
    let requests = 0;
    for (;;) {
      const res = await fetch(`${started.api}/accounts/${ACCOUNT}/load_balancers/origin_stats`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { result: Array<{ origin_name: string; requests: number }> };
      requests = body.result.find((origin) => origin.origin_name === 'a')?.requests ?? 0;
      if (requests >= calls || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.equal(requests, calls, `origin_stats counted ${requests} of ${calls} calls\n${proc.stderr()}`);

    proc.kill('SIGTERM');
    assert.equal((await proc.waitForExit(30_000)).code, 0);
  });
});
