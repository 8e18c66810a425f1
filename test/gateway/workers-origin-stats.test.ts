/**
 * Per-origin statistics with gateway workers (SPEC §13: "summed over workers and instances"): `serve` with
 * `gateway.workers: 2` in front of a real anvil; calls on fresh connections (node:cluster hands them to
 * both workers); every one of them is counted in `GET …/load_balancers/origin_stats` — the workers report
 * their counts to the control process, which flushes them to the store (only workers serve the gateway,
 * so a count there can only have come that way). Then SIGTERM: a clean exit.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { type CliProcess, runCli, spawnCli, waitForWorkersServing, writeWorkersConfig } from '../helpers/cli.js';
import { freshCall } from '../helpers/http.js';

const ACCOUNT = '5317c4a1d00d5317c4a1d00d5317c4a1';
const dir = mkdtempSync(join(tmpdir(), 'switchyard-worker-stats-'));
let anvil: AnvilNode | undefined;
let proc: CliProcess | undefined;

after(async () => {
  proc?.kill('SIGKILL');
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('origin statistics with gateway workers', () => {
  it('counts every call made through either worker', async () => {
    anvil = await startTestAnvil();
    const config = writeWorkersConfig(dir, [
      'networks: { sepolia: { chain_id: 31337, pools: [main] } }',
      'pools:',
      `  - { name: main, origins: [{ name: a, address: "${anvil.url}" }] }`,
    ]);
    proc = spawnCli(['serve', '--config', config]);
    const started = await waitForWorkersServing(proc);
    const made = await runCli(['token', 'create', '--account', ACCOUNT, '--read-only', '--config', config]);
    assert.equal(made.code, 0, made.stderr);
    const token = made.stdout.trim();

    const calls = 30;
    for (let i = 0; i < calls; i += 1) {
      const answer = await freshCall(`${started.gateway}/v1/sepolia`, 'eth_getBalance', [
        `0x${'3'.repeat(40)}`,
        'latest',
      ]);
      assert.equal(answer.status, 200);
    }

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
