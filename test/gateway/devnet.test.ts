/**
 * `switchyard serve` with the devnet, as a real child process: it starts anvil nodes (chain id
 * 11155111) as the sepolia pool, the README's curl returns the genesis block, rinkeby is retired, and
 * when serve ends — SIGTERM, SIGINT, or even SIGKILL — no anvil is left behind (checked by PID).
 * The config mirrors the built-in offline defaults, except for free ports and a temporary data_dir.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isPidAlive, waitForPidsGone } from '../helpers/anvil.js';
import { type CliProcess, spawnCli } from '../helpers/cli.js';
import { post, type RpcAnswer } from '../helpers/http.js';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-devnet-'));
const running: CliProcess[] = [];
const anvils: number[] = [];

after(async () => {
  for (const proc of running) proc.kill('SIGKILL');
  for (const pid of anvils) if (isPidAlive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function configFile(name: string, nodes: number): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(
    path,
    [
      `data_dir: ${join(dir, name)}`,
      'log_level: info',
      'gateway: { listen: "127.0.0.1:0" }',
      'api: { listen: "127.0.0.1:0" }',
      `devnet: { enabled: true, network: sepolia, pool: sepolia-devnet, base_port: 0, nodes: ${nodes} }`,
      'networks:',
      '  sepolia: { chain_id: 11155111, pools: [sepolia-devnet] }',
      '  rinkeby: { chain_id: 4, retired_on: "2023-01-30", replacement: sepolia }',
      '',
    ].join('\n'),
  );
  return path;
}

async function startServe(name: string, nodes: number): Promise<{ proc: CliProcess; pids: number[]; url: string }> {
  const proc = spawnCli(['serve', '--config', configFile(name, nodes)]);
  running.push(proc);
  const started = await proc.waitForLog((line) => line.msg === 'devnet started', 60_000);
  const pids = started.pids as number[];
  anvils.push(...pids);
  const listening = await proc.waitForLog((line) => line.msg === 'gateway listening', 60_000);
  assert.equal(pids.length, nodes);
  for (const pid of pids) assert.ok(isPidAlive(pid), `anvil ${pid} runs`);
  return { proc, pids, url: listening.url as string };
}

describe('serve with the devnet', () => {
  it('serves sepolia from two anvil nodes and stops them on SIGTERM', async () => {
    const { proc, pids, url } = await startServe('term', 2);
    const res = await post(
      `${url}/v1/sepolia`,
      '{"jsonrpc":"2.0","method":"eth_getBlockByNumber","params":["0x0",false],"id":1}',
    );
    assert.equal(res.status, 200, res.text);
    const genesis = res.json<RpcAnswer>().result as { number: string; hash: string };
    assert.equal(genesis.number, '0x0');
    const chain = (
      await post(`${url}/v1/sepolia`, '{"jsonrpc":"2.0","method":"eth_chainId","id":2}')
    ).json<RpcAnswer>();
    assert.equal(chain.result, '0xaa36a7');
    const retired = await post(`${url}/v1/rinkeby`, '{"jsonrpc":"2.0","method":"eth_chainId","id":3}');
    assert.equal(retired.status, 410);

    proc.kill('SIGTERM');
    const exit = await proc.waitForExit(30_000);
    assert.equal(exit.code, 0, proc.stderr());
    assert.deepEqual(await waitForPidsGone(pids, 5_000), []);
    assert.ok(proc.logs.some((line) => line.msg === 'devnet stopped'));
  });

  it('stops the nodes on SIGINT', async () => {
    const { proc, pids } = await startServe('int', 1);
    proc.kill('SIGINT');
    assert.equal((await proc.waitForExit(30_000)).code, 0, proc.stderr());
    assert.deepEqual(await waitForPidsGone(pids, 5_000), []);
  });

  it('leaves no node behind even when serve is SIGKILLed (watchdog)', async () => {
    const { proc, pids } = await startServe('kill', 1);
    proc.kill('SIGKILL');
    const exit = await proc.waitForExit(10_000);
    assert.equal(exit.signal, 'SIGKILL');
    assert.deepEqual(await waitForPidsGone(pids, 5_000), []);
  });
});

describe('serve refuses a bad config', () => {
  it('exits 2 with a message naming the unknown key and the file', async () => {
    const path = join(dir, 'bad.yaml');
    writeFileSync(path, 'gateway:\n  listen: "127.0.0.1:0"\n  lisen: "x"\n');
    const proc = spawnCli(['serve', '--config', path]);
    running.push(proc);
    const exit = await proc.waitForExit(30_000);
    assert.equal(exit.code, 2);
    assert.match(proc.stderr(), /bad\.yaml: gateway\.lisen: unknown key; did you mean `listen`\?/);
  });

  it('exits 2 naming a missing environment variable', async () => {
    const path = join(dir, 'env.yaml');
    writeFileSync(path, `data_dir: \${SWITCHYARD_DEVNET_TEST_UNSET}\n`);
    const proc = spawnCli(['serve', '--config', path], { env: { SWITCHYARD_DEVNET_TEST_UNSET: '' } });
    running.push(proc);
    assert.equal((await proc.waitForExit(30_000)).code, 2);
    assert.match(proc.stderr(), /data_dir: refers to environment variable SWITCHYARD_DEVNET_TEST_UNSET/);
  });

  it('exits 1 naming gateway.listen, or devnet.base_port, when the port is taken', async () => {
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      const gatewayPath = join(dir, 'busy-gateway.yaml');
      writeFileSync(
        gatewayPath,
        `data_dir: ${join(dir, 'busy-gateway')}\ngateway: { listen: "127.0.0.1:${port}" }\napi: { listen: "127.0.0.1:0" }\n`,
      );
      const gateway = spawnCli(['serve', '--config', gatewayPath]);
      running.push(gateway);
      assert.equal((await gateway.waitForExit(30_000)).code, 1);
      assert.match(
        gateway.stderr(),
        new RegExp(
          `gateway\\.listen: 127\\.0\\.0\\.1:${port} \\(set by gateway\\.listen in ${gatewayPath}\\) is already in use`,
        ),
      );
      assert.doesNotMatch(gateway.stderr(), /8545|--config/, 'no hint about another port or a flag already given');

      const devnetPath = join(dir, 'busy-devnet.yaml');
      writeFileSync(
        devnetPath,
        [
          `data_dir: ${join(dir, 'busy-devnet')}`,
          'gateway: { listen: "127.0.0.1:0" }',
          'api: { listen: "127.0.0.1:0" }',
          `devnet: { enabled: true, base_port: ${port}, nodes: 1 }`,
          'networks: { sepolia: { chain_id: 11155111, pools: [sepolia-devnet] } }',
          '',
        ].join('\n'),
      );
      const devnet = spawnCli(['serve', '--config', devnetPath]);
      running.push(devnet);
      assert.equal((await devnet.waitForExit(30_000)).code, 1);
      assert.match(devnet.stderr(), new RegExp(`devnet\\.base_port ${port}…${port} is taken`));
    } finally {
      busy.close();
    }
  });

  it('exits 2 on an unknown option', async () => {
    const proc = spawnCli(['serve', '--confg', 'x.yaml']);
    running.push(proc);
    assert.equal((await proc.waitForExit(30_000)).code, 2);
    assert.match(proc.stderr(), /unknown option --confg/);
  });
});
