/**
 * `switchyard serve` on the offline devnet, as a newcomer runs it but on free ports: writes the config
 * (devnet on, `sepolia` served by it, both listeners on 127.0.0.1:0), spawns the CLI and waits, bounded,
 * until the devnet and both listeners are up. The caller stops `proc` and checks `anvils` are gone.
 */
import { writeFileSync } from 'node:fs';
import { type CliProcess, spawnCli } from './cli.js';

export interface DevnetServe {
  proc: CliProcess;
  /** PIDs of the anvil nodes, from the "devnet started" log line. */
  anvils: number[];
  /** Gateway base URL, e.g. http://127.0.0.1:PORT. */
  gateway: string;
  /** Management API base URL, ending in /client/v4. */
  api: string;
}

export async function spawnDevnetServe(configPath: string, dataDir: string): Promise<DevnetServe> {
  writeFileSync(
    configPath,
    [
      `data_dir: ${dataDir}`,
      'gateway: { listen: "127.0.0.1:0" }',
      'api: { listen: "127.0.0.1:0" }',
      'devnet: { enabled: true, network: sepolia, pool: sepolia-devnet, base_port: 0 }',
      'networks:',
      '  sepolia: { chain_id: 11155111, pools: [sepolia-devnet] }',
      '',
    ].join('\n'),
  );
  const proc = spawnCli(['serve', '--config', configPath]);
  let devnet: Record<string, unknown>;
  let started: Record<string, unknown>;
  try {
    devnet = await proc.waitForLog((line) => line.msg === 'devnet started', 60_000);
    started = await proc.waitForLog((line) => line.msg === 'switchyard started', 60_000);
  } catch (err) {
    // Not handed to the caller yet, so stopped here (SIGTERM: serve stops its anvil nodes too).
    proc.kill('SIGTERM');
    await proc.waitForExit(30_000).catch(() => proc.kill('SIGKILL'));
    throw err;
  }
  return {
    proc,
    anvils: devnet.pids as number[],
    gateway: started.gateway as string,
    api: started.api as string,
  };
}
