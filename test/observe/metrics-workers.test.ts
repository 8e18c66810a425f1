/**
 * The SPEC §16 series with `gateway.workers: 2` (a spawned `serve`, as an operator runs it): calls on
 * fresh connections reach both workers, and the control's /metrics sums them — the per-method and
 * per-origin counts equal the calls made, each origin's duration histogram counts the same attempts —
 * while the series only one process may report stay single: one build_info at 1, origin health 0/1.
 * The process series are there, summed over the three processes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { type CliProcess, spawnCli, waitForWorkersServing, writeWorkersConfig } from '../helpers/cli.js';
import { freshCall } from '../helpers/http.js';
import { parseProm, samplesOf, sumOf } from '../helpers/prometheus.js';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-observe-workers-'));
let anvil: AnvilNode | undefined;
let proc: CliProcess | undefined;

after(async () => {
  proc?.kill('SIGKILL');
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('metrics with gateway workers', () => {
  it('sums the per-method and per-origin series over the workers; build_info and origin health stay single', async () => {
    anvil = await startTestAnvil();
    const config = writeWorkersConfig(dir, [
      'networks: { sepolia: { chain_id: 11155111, pools: [main, spare] } }',
      'pools:',
      `  - { name: main, origins: [{ name: a, address: "${anvil.url}" }] }`,
      `  - { name: spare, origins: [{ name: b, address: "${anvil.url}" }] }`,
    ]);
    proc = spawnCli(['serve', '--config', config]);
    const started = await waitForWorkersServing(proc);

    const calls = 40;
    for (let i = 0; i < calls; i += 1) {
      assert.equal((await freshCall(`${started.gateway}/v1/sepolia`, 'eth_accounts')).status, 200);
    }

    const text = await (await fetch(`${String(started.api).replace(/\/client\/v4$/, '')}/metrics`)).text();
    const prom = parseProm(text);
    const perWorker = samplesOf(prom, 'switchyard_gateway_worker_requests_total');
    assert.equal(perWorker.length, 2, 'both workers answered the scrape');
    assert.ok(
      perWorker.every((s) => s.value > 0),
      `both workers served calls: ${perWorker.map((s) => s.value).join(', ')}`,
    );
    const where = { network: 'sepolia', method: 'eth_accounts', outcome: 'ok' };
    assert.equal(sumOf(prom, 'switchyard_rpc_requests_total', where), calls);
    const origin = { network: 'sepolia', pool: 'main', origin: 'a' };
    assert.equal(sumOf(prom, 'switchyard_origin_requests_total', { ...origin, outcome: 'ok' }), calls);
    assert.equal(sumOf(prom, 'switchyard_origin_request_duration_seconds_count', origin), calls);
    assert.equal(samplesOf(prom, 'switchyard_origin_request_duration_seconds_count', origin).length, 1);

    const builds = samplesOf(prom, 'switchyard_build_info');
    assert.equal(builds.length, 1);
    assert.equal(builds[0]?.value, 1, 'build_info is reported by the control process only');
    assert.deepEqual(
      samplesOf(prom, 'switchyard_origin_healthy').map((s) => `${s.labels.pool}/${s.labels.origin}=${s.value}`),
      ['main/a=1', 'spare/b=1'],
    );
    assert.ok(sumOf(prom, 'process_resident_memory_bytes') > 3 * 10_000_000, 'three processes of memory');
    assert.ok(sumOf(prom, 'process_cpu_seconds_total') > 0);
    const lag = samplesOf(prom, 'nodejs_eventloop_lag_seconds');
    assert.equal(lag.length, 1);
    assert.ok((lag[0]?.value ?? -1) >= 0 && (lag[0]?.value ?? 1) < 5, 'the worst process, not a sum');

    proc.kill('SIGTERM');
    assert.equal((await proc.waitForExit(30_000)).code, 0);
  });
});
