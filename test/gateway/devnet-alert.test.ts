/**
 * The offline demo end to end (SPEC §1: "curl the gateway, watch health, kill an origin and see failover
 * and an alert"), with `switchyard serve` as a real child process on the devnet (two anvil nodes, free
 * ports): a token made with `switchyard token create` while serve runs lists the demo alert policy;
 * once both origins are Healthy one anvil node is killed by PID; requests through /v1/sepolia keep
 * succeeding while the health endpoint turns the node Unhealthy and the policy's email lands as an .eml
 * file in data_dir/outbox/ naming the origin and Unhealthy. Then SIGTERM: exit 0, no anvil left.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DEFAULTS } from '../../src/config/defaults.js';
import { DEVNET_ALERT_POLICY_NAME } from '../../src/devnet/alert-policy.js';
import { isPidAlive, waitForPidsGone } from '../helpers/anvil.js';
import { type CliProcess, runCli } from '../helpers/cli.js';
import { post, type RpcAnswer, send } from '../helpers/http.js';
import { spawnDevnetServe } from '../helpers/serve.js';

const ACCOUNT = DEFAULTS.account_id;
const dir = mkdtempSync(join(tmpdir(), 'switchyard-devnet-alert-'));
const dataDir = join(dir, 'data');
const config = join(dir, 'serve.yaml');
let proc: CliProcess | undefined;
let anvils: number[] = [];

after(() => {
  proc?.kill('SIGKILL');
  for (const pid of anvils) if (isPidAlive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface PoolView {
  id: string;
  name: string;
  origins: Array<{ name: string; healthy?: boolean }>;
}

/** Polls `check` until it returns a value, at most `timeoutMs`; `what` names the awaited condition. */
async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms\n${proc?.stderr() ?? ''}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function outboxMails(): string[] {
  try {
    return readdirSync(join(dataDir, 'outbox'))
      .filter((name) => name.endsWith('.eml'))
      .map((name) => readFileSync(join(dataDir, 'outbox', name), 'utf8'));
  } catch {
    return [];
  }
}

describe('offline demo: kill an origin, see failover and an alert', () => {
  it('emails operator@localhost through the outbox while requests keep succeeding', async () => {
    const serve = await spawnDevnetServe(config, dataDir);
    proc = serve.proc;
    anvils = serve.anvils;
    const rpcUrl = `${serve.gateway}/v1/sepolia`;
    const api = `${serve.api}/accounts/${ACCOUNT}`;

    const tokenRun = await runCli(['token', 'create', '--account', ACCOUNT, '--config', config]);
    assert.equal(tokenRun.code, 0, tokenRun.stderr);
    const token = tokenRun.stdout.trim();
    const get = async <T>(path: string): Promise<T> => {
      const res = await send(`${api}${path}`, { method: 'GET', headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.status, 200, res.text);
      return res.json<{ result: T }>().result;
    };

    const policies = await get<Array<{ name: string; mechanisms: unknown; enabled: boolean }>>('/alerting/v3/policies');
    const demo = policies.find((policy) => policy.name === DEVNET_ALERT_POLICY_NAME);
    assert.ok(demo, `the demo policy exists: ${JSON.stringify(policies)}`);
    assert.equal(demo.enabled, true);
    assert.deepEqual(demo.mechanisms, { email: [{ id: 'operator@localhost' }] });

    const pool = await waitFor('both devnet origins Healthy', 60_000, async () => {
      const pools = await get<PoolView[]>('/load_balancers/pools');
      const found = pools.find((candidate) => candidate.name === 'sepolia-devnet');
      return found?.origins.every((origin) => origin.healthy === true) ? found : undefined;
    });
    assert.deepEqual(
      pool.origins.map((origin) => origin.name),
      ['anvil-0', 'anvil-1'],
    );

    const victim = anvils[0] as number;
    process.kill(victim, 'SIGKILL');
    let requests = 0;
    const mail = await waitFor('the alert email in data_dir/outbox', 60_000, async () => {
      requests += 1;
      const res = await post(rpcUrl, `{"jsonrpc":"2.0","id":${requests},"method":"eth_chainId","params":[]}`);
      assert.equal(res.status, 200, `request ${requests} after the kill: ${res.text}`);
      assert.equal(res.json<RpcAnswer>().result, '0xaa36a7');
      return outboxMails().find((text) => /Subject: .*anvil-0.* is Unhealthy/.test(text));
    });
    assert.match(mail, /^To: operator@localhost/m);
    assert.match(mail, /Subject: \[Switchyard\] Origin anvil-0 \(pool sepolia-devnet\) is Unhealthy/);

    const health = await get<PoolView>(`/load_balancers/pools/${pool.id}`);
    assert.deepEqual(
      health.origins.map((origin) => [origin.name, origin.healthy]),
      [
        ['anvil-0', false],
        ['anvil-1', true],
      ],
    );

    proc.kill('SIGTERM');
    assert.equal((await proc.waitForExit(30_000)).code, 0, proc.stderr());
    assert.deepEqual(await waitForPidsGone(anvils, 5_000), []);
  });
});
