/**
 * Origin scores with gateway workers (SPEC §17 "scores must work with gateway.workers > 1"): `serve`
 * with `gateway.workers: 2` in front of a real anvil; calls on fresh connections (node:cluster hands
 * them to both workers). Each worker reports what it counted to the control process, whose book
 * `switchyard_origin_score` and the origin stats API read: the score there holds every call (not one
 * worker's half), and the metric has one series per origin (never summed over workers).
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
const dir = mkdtempSync(join(tmpdir(), 'switchyard-worker-scores-'));
let anvil: AnvilNode | undefined;
let proc: CliProcess | undefined;

after(async () => {
  proc?.kill('SIGKILL');
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('origin scores with gateway workers', () => {
  it("the control's score holds both workers' calls; the metric is one series per origin", async () => {
    anvil = await startTestAnvil();
    const config = writeWorkersConfig(dir, [
      'networks: { sepolia: { chain_id: 31337, pools: [main] } }',
      'pools:',
      `  - { name: main, origins: [{ name: a, address: "${anvil.url}" }], origin_steering: { policy: dynamic_latency } }`,
    ]);
    proc = spawnCli(['serve', '--config', config]);
    const started = await waitForWorkersServing(proc);
    const made = await runCli(['token', 'create', '--account', ACCOUNT, '--read-only', '--config', config]);
    assert.equal(made.code, 0, made.stderr);
    const token = made.stdout.trim();

    const calls = 40;
    for (let i = 0; i < calls; i += 1) {
      const res = await freshCall(`${started.gateway}/v1/sepolia`, 'eth_getBalance', [`0x${'3'.repeat(40)}`, 'latest']);
      assert.equal(res.status, 200);
    }

    // Reports reach the control every second; the samples decay (half-life 10 s), so allow for that.
    const deadline = Date.now() + 15_000;
    let samples = 0;
    for (;;) {
      const res = await fetch(`${started.api}/accounts/${ACCOUNT}/load_balancers/origin_stats`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const body = (await res.json()) as { result: Array<{ origin_name: string; score: { samples: number } | null }> };
      samples = body.result.find((origin) => origin.origin_name === 'a')?.score?.samples ?? 0;
      if (samples >= calls * 0.7 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(samples >= calls * 0.7, `the control's score holds ${samples} of ${calls} calls\n${proc.stderr()}`);

    const metrics = await (await fetch(`${new URL(started.api).origin}/metrics`)).text();
    const series = metrics.split('\n').filter((line) => line.startsWith('switchyard_origin_score{'));
    assert.equal(series.length, 1, series.join('\n'));
    assert.match(series[0] as string, /^switchyard_origin_score\{network="sepolia",pool="main",origin="a"\} 0\.\d+/);
    assert.ok(Number((series[0] as string).split(' ')[1]) < 1, 'an expected latency in seconds, not a sum');

    proc.kill('SIGTERM');
    assert.equal((await proc.waitForExit(30_000)).code, 0);
  });
});
