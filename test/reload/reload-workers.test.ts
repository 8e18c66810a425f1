/**
 * Reload with `gateway.workers: 2` (SPEC §15): `serve` as a child process; the control process re-reads
 * the file on SIGHUP and every worker serves the new config as soon as the control says it reloaded
 * (it sends the config to each worker before it logs `config reloaded`, on the channel node:cluster
 * also hands connections over, so no connection reaches a worker before its config). A client calls
 * throughout the reload; none of its calls may fail.
 * - Calls on fresh connections (node:cluster hands them out in turn) reach both workers: a network
 *   added answers on each, a method denied is refused by each, and `gateway.max_batch` lowered is
 *   enforced by each — from the first call after the reload on;
 * - a worker killed after the reload is replaced by one that serves the reloaded config (its `init`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { type CliProcess, spawnCli } from '../helpers/cli.js';
import { callsThroughout } from '../helpers/client-loop.js';
import { freshCall, send } from '../helpers/http.js';

const ADDRESS = '0x00000000000000000000000000000000000000aa';

/** The control's /metrics: a series' value (0 when absent). */
async function metric(apiRoot: string, series: string): Promise<number> {
  const text = (await send(`${apiRoot}/metrics`, { method: 'GET' })).text;
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return Number(line?.slice(series.length + 1) ?? 0);
}

/** The requests each worker slot served. */
async function workerRequests(apiRoot: string): Promise<[number, number]> {
  const slot = (n: number) => metric(apiRoot, `switchyard_gateway_worker_requests_total{worker="${n}"}`);
  return [await slot(1), await slot(2)];
}

/** A batch of three on a connection of its own: its HTTP status. */
function freshBatch(url: string): Promise<number> {
  const body = JSON.stringify([1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] })));
  return send(url, { body, headers: { 'content-type': 'application/json', connection: 'close' } }).then(
    (res) => res.status,
  );
}

describe('reload with gateway.workers: 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-reload-workers-'));
  const configFile = join(dir, 'switchyard.yaml');
  let node: AnvilNode | undefined;
  let serve: CliProcess | undefined;
  let gateway = '';
  let apiRoot = '';
  let workerPids: number[] = [];

  const write = (networks: Record<string, unknown>, gatewayExtra: Record<string, unknown> = {}) =>
    writeFileSync(
      configFile,
      stringify({
        data_dir: join(dir, 'data'),
        gateway: { listen: '127.0.0.1:0', workers: 2, ...gatewayExtra },
        api: { listen: '127.0.0.1:0' },
        networks,
        pools: [{ name: 'main', origins: [{ name: 'a', address: node?.url }] }],
      }),
    );

  before(async () => {
    node = await startTestAnvil();
    write({ sepolia: { chain_id: 11155111, pools: ['main'] } });
    serve = spawnCli(['serve', '--config', configFile]);
    workerPids = (await serve.waitForLog((line) => line.msg === 'gateway workers serving', 60_000)).pids as number[];
    const started = await serve.waitForLog((line) => line.msg === 'switchyard started', 60_000);
    gateway = started.gateway as string;
    apiRoot = (started.api as string).replace(/\/client\/v4$/, '');
  });
  after(async () => {
    serve?.kill('SIGKILL');
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every worker serves the reloaded config from the first call after the reload', async () => {
    assert.equal((await freshCall(`${gateway}/v1/holesky`, 'eth_chainId')).status, 404);
    const { failures } = await callsThroughout(`${gateway}/v1/sepolia`, async () => {
      write(
        {
          sepolia: { chain_id: 11155111, pools: ['main'], deny_methods: ['eth_getBalance'] },
          holesky: { chain_id: 11155111, pools: ['main'] },
        },
        { max_batch: 2 },
      );
      serve?.kill('SIGHUP');
      await serve?.waitForLog((line) => line.msg === 'config reloaded', 30_000);
      const before = await workerRequests(apiRoot);
      for (let i = 0; i < 10; i += 1) {
        const added = await freshCall(`${gateway}/v1/holesky`, 'eth_chainId');
        assert.deepEqual([added.status, added.body.result], [200, '0xaa36a7'], `call ${i} on the network added`);
        const denied = await freshCall(`${gateway}/v1/sepolia`, 'eth_getBalance', [ADDRESS, 'latest']);
        assert.equal(
          (denied.body.error as { code?: number } | undefined)?.code,
          -32601,
          `call ${i} of a method denied`,
        );
        assert.equal(await freshBatch(`${gateway}/v1/sepolia`), 413, `batch ${i} over the lowered max_batch`);
      }
      const after = await workerRequests(apiRoot);
      assert.ok(
        after[0] - before[0] >= 10 && after[1] - before[1] >= 10,
        `both workers answered: ${before} → ${after}`,
      );
    });
    assert.deepEqual(failures, [], 'no call failed during the reload');
  });

  it('a worker started after the reload serves the reloaded config', async () => {
    const victim = workerPids[0] as number;
    process.kill(victim, 'SIGKILL');
    await serve?.waitForLog(
      (line) => line.msg === 'gateway worker exited; starting a new one' && line.pid === victim,
      10_000,
    );
    const deadline = Date.now() + 30_000;
    while ((await metric(apiRoot, 'switchyard_gateway_workers')) < 2) {
      assert.ok(Date.now() < deadline, 'the replacement worker did not come up within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const before = await workerRequests(apiRoot);
    for (let i = 0; i < 10; i += 1) {
      const added = await freshCall(`${gateway}/v1/holesky`, 'eth_chainId');
      assert.deepEqual([added.status, added.body.result], [200, '0xaa36a7'], `call ${i} on the network added`);
    }
    const after = await workerRequests(apiRoot);
    assert.ok(after[0] > before[0] && after[1] > before[1], `both workers answered: ${before} → ${after}`);
  });
});
