/**
 * Reload of a running `serve` (SPEC §15), as an operator does it: `serve --config FILE` as a child
 * process against real anvil origins, the file edited, then SIGHUP — and `switchyard reload`, which finds
 * serve through `data_dir/serve.pid`. A client calls the gateway throughout; none of its calls may fail.
 * - serve.pid names serve while it runs and is gone after a clean exit;
 * - one SIGHUP: a network added answers, a method denied is refused, `gateway.max_batch` lowered is
 *   enforced, and an origin added to a pool under `pools_from_file: apply` is routed to;
 * - `switchyard reload`: signals serve (exit 0), which applies the next edit;
 * - `switchyard reload` without a running serve says why: no serve.pid, a pid that is not running, a pid
 *   that is some other program (exit 1).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { type CliProcess, runCli, spawnCli } from '../helpers/cli.js';
import { callsThroughout } from '../helpers/client-loop.js';
import { post, rpc } from '../helpers/http.js';

/** An address funded only on origin B's node: an answer tells which origin served it. */
const PROBE = '0x00000000000000000000000000000000000000bb';
const PROBE_BALANCE = '0xb0b0';

describe('serve reloads on SIGHUP and switchyard reload', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-reload-serve-'));
  const dataDir = join(dir, 'data');
  const configFile = join(dir, 'switchyard.yaml');
  const nodes: AnvilNode[] = [];
  let serve: CliProcess | undefined;
  let gateway = '';

  const write = (networks: Record<string, unknown>, pool: unknown[], gatewayExtra: Record<string, unknown> = {}) =>
    writeFileSync(
      configFile,
      stringify({
        data_dir: dataDir,
        gateway: { listen: '127.0.0.1:0', ...gatewayExtra },
        api: { listen: '127.0.0.1:0' },
        pools_from_file: 'apply',
        networks,
        pools: [{ name: 'main', origins: pool }],
      }),
    );
  /** The `n`th 'config reloaded' line of serve's log, once it is there. */
  const reloaded = async (n: number) => {
    const lines = () => serve?.logs.filter((line) => line.msg === 'config reloaded') ?? [];
    await serve?.waitForLog(() => lines().length >= n, 60_000);
    return lines()[n - 1];
  };

  before(async () => {
    nodes.push(await startTestAnvil(), await startTestAnvil());
    await rpc(nodes[1]?.url ?? '', 'anvil_setBalance', [PROBE, PROBE_BALANCE]);
    write({ sepolia: { chain_id: 11155111, pools: ['main'] } }, [{ name: 'a', address: nodes[0]?.url }]);
    serve = spawnCli(['serve', '--config', configFile]);
    const started = await serve.waitForLog((line) => line.msg === 'switchyard started', 60_000);
    gateway = started.gateway as string;
  });
  after(async () => {
    serve?.kill('SIGKILL');
    await Promise.all(nodes.map((node) => node.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('serve.pid names the running serve', () => {
    assert.equal(readFileSync(join(dataDir, 'serve.pid'), 'utf8'), `${serve?.pid}\n`);
  });

  it('SIGHUP: a network added, a method denied, a limit lowered and an origin added are live at once', async () => {
    const { result: line, failures } = await callsThroughout(`${gateway}/v1/sepolia`, async () => {
      write(
        {
          sepolia: { chain_id: 11155111, pools: ['main'], deny_methods: ['eth_getBalance'] },
          holesky: { chain_id: 11155111, pools: ['main'] },
        },
        [
          { name: 'a', address: nodes[0]?.url, weight: 0 },
          { name: 'b', address: nodes[1]?.url },
        ],
        { max_batch: 2 },
      );
      serve?.kill('SIGHUP');
      return reloaded(1);
    });
    assert.deepEqual(line?.changed, ['gateway.max_batch', 'networks.sepolia', 'networks.holesky', 'pools']);
    assert.deepEqual(failures, [], 'no call failed during the reload');

    const holesky = await rpc(`${gateway}/v1/holesky`, 'eth_getBalance', [PROBE, 'latest']);
    assert.equal(holesky.answer.result, PROBE_BALANCE, 'the new network answers, from the origin added');
    const denied = await rpc(`${gateway}/v1/sepolia`, 'eth_getBalance', [PROBE, 'latest']);
    assert.equal(denied.answer.error?.code, -32601);
    const batch = JSON.stringify([1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] })));
    assert.equal((await post(`${gateway}/v1/sepolia`, batch)).status, 413);
  });

  it('switchyard reload signals serve through serve.pid', async () => {
    assert.equal((await rpc(`${gateway}/v1/third`, 'eth_chainId')).status, 404);
    write({ sepolia: { chain_id: 11155111, pools: ['main'] }, third: { chain_id: 11155111, pools: ['main'] } }, [
      { name: 'b', address: nodes[1]?.url },
    ]);
    const result = await runCli(['reload', '--config', configFile]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`sent SIGHUP to serve \\(pid ${serve?.pid}\\)`));
    await reloaded(2);
    assert.equal((await rpc(`${gateway}/v1/third`, 'eth_chainId')).answer.result, '0xaa36a7');
    const allowed = await rpc(`${gateway}/v1/sepolia`, 'eth_getBalance', [PROBE, 'latest']);
    assert.equal(allowed.answer.result, PROBE_BALANCE, 'the method is allowed again');
  });

  it('serve.pid is removed at a clean exit; switchyard reload then says no serve runs', async () => {
    serve?.kill('SIGTERM');
    assert.deepEqual(await serve?.waitForExit(30_000), { code: 0, signal: null });
    assert.equal(existsSync(join(dataDir, 'serve.pid')), false);
    const result = await runCli(['reload', '--config', configFile]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /no .*serve\.pid: serve is not running with data_dir/);
  });

  it('a stale serve.pid is named as such: a process gone, or one that is no serve', async () => {
    const gone = nodes[0] as AnvilNode;
    const other = nodes[1] as AnvilNode;
    writeFileSync(join(dataDir, 'serve.pid'), `${other.pid}\n`);
    const notServe = await runCli(['reload', '--config', configFile]);
    assert.equal(notServe.code, 1);
    assert.match(notServe.stderr, new RegExp(`names process ${other.pid}, which is not a switchyard serve`));
    assert.equal(await rpc(other.url, 'eth_chainId').then((r) => r.status), 200, 'and it was not signalled');
    await gone.stop();
    writeFileSync(join(dataDir, 'serve.pid'), `${gone.pid}\n`);
    const notRunning = await runCli(['reload', '--config', configFile]);
    assert.equal(notRunning.code, 1);
    assert.match(notRunning.stderr, new RegExp(`names process ${gone.pid}, which is not running`));
  });
});
