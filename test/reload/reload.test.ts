/**
 * Reload without restart (SPEC §15), in one process, on whichever store backend the run selects: the
 * reload `serve` runs on SIGHUP (main/reload.ts), from a file read through the pipeline. Against real
 * anvil origins, with a client calling the gateway throughout each reload (none of its calls may fail):
 * - a network added answers at once (404 before) and has its per-origin series; a method denied is
 *   refused at once (-32601); `gateway.max_batch` and `limits.max_pools_per_account` changed apply at once (413; the API's 400);
 *   under `pools_from_file: apply` an origin added to a pool is routed to at once;
 * - a file with errors changes nothing: every error is logged with its path, the outcome lists them, and
 *   `switchyard_config_reload_failures_total` counts it (the loaded timestamp stays);
 * - keys that need a restart (gateway.listen, gateway.workers, redis_url) are logged at warn, one line
 *   each naming the key, and keep their running value while the rest of the file applies;
 * - `gateway.rate_limit` and `gateway.access_log` apply from the next call (a limit set, then taken away);
 * - `switchyard_config_reloads_total` counts every reload and `switchyard_config_loaded_timestamp_seconds`
 *   moves with each that applied.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createToken } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/clock.js';
import { createLogger } from '../../src/log.js';
import type { ReloadOutcome } from '../../src/main/reload.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { callsThroughout } from '../helpers/client-loop.js';
import { post, rpc, send } from '../helpers/http.js';
import { testStoreLocation } from '../helpers/store.js';

const ACCOUNT = '5317c4a1d00d5317c4a1d00d5317c4a1';
/** An address funded only on origin B's node: an answer tells which origin served it. */
const PROBE = '0x00000000000000000000000000000000000000bb';
const PROBE_BALANCE = '0xb0b0';

type Raw = Record<string, unknown>;

describe('reload without restart', () => {
  const nodes: AnvilNode[] = [];
  const lines: Record<string, unknown>[] = [];
  let app: TestApp;
  let token = '';
  let file: Raw;
  let cleanup = () => {};

  before(async () => {
    nodes.push(await startTestAnvil(), await startTestAnvil());
    await rpc(nodes[1]?.url ?? '', 'anvil_setBalance', [PROBE, PROBE_BALANCE]);
    const location = await testStoreLocation();
    cleanup = location.cleanup;
    file = {
      ...(location.database_url === undefined ? {} : { database_url: location.database_url }),
      pools_from_file: 'apply',
      networks: { sepolia: { chain_id: 11155111, pools: ['main'] } },
      pools: [poolOf('main', [nodes[0]?.url ?? ''])],
    };
    const logger = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line)) });
    app = await startApp(file, { logger });
    token = (await createToken(app.store.db, systemClock, { accountId: ACCOUNT, readOnly: false })).token;
  });
  after(async () => {
    await app?.close();
    await Promise.all(nodes.map((node) => node.stop()));
    cleanup();
  });

  /** Reloads `next` while a client calls sepolia throughout; none of its calls may fail. */
  const reloadUnderLoad = async (next: Raw): Promise<ReloadOutcome> => {
    const { result: outcome, failures } = await callsThroughout(app.rpcUrl('sepolia'), () => app.reloadWith(next));
    assert.deepEqual(failures, [], 'no call failed during the reload');
    file = next;
    return outcome;
  };
  const network = (name: string, extra: Raw = {}) => ({ [name]: { chain_id: 11155111, pools: ['main'], ...extra } });
  const networks = () => file.networks as Raw;
  const metrics = async () => {
    const res = await send(`${new URL(app.apiUrl).origin}/metrics`, { method: 'GET' });
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(res.text)?.[1]);
    return {
      reloads: value('switchyard_config_reloads_total'),
      failures: value('switchyard_config_reload_failures_total'),
      loaded: value('switchyard_config_loaded_timestamp_seconds'),
    };
  };

  it('a network added answers at once', async () => {
    assert.equal((await rpc(app.rpcUrl('holesky'), 'eth_chainId')).status, 404);
    const before = await metrics();
    const startedAt = Date.now();
    const outcome = await reloadUnderLoad({ ...file, networks: { ...networks(), ...network('holesky') } });
    assert.deepEqual(outcome, { ok: true, changed: ['networks.holesky'], kept: [] });
    const answer = await rpc(app.rpcUrl('holesky'), 'eth_chainId');
    assert.equal(answer.status, 200);
    assert.equal(answer.answer.result, '0xaa36a7');
    const now = await metrics();
    assert.equal(now.reloads, before.reloads + 1);
    assert.equal(now.failures, 0);
    assert.ok(now.loaded > before.loaded && now.loaded >= startedAt / 1000, 'the loaded timestamp moved');
    const scraped = (await send(`${new URL(app.apiUrl).origin}/metrics`, { method: 'GET' })).text;
    assert.match(scraped, /^switchyard_origin_healthy\{network="holesky",pool="main",origin="[^"]+"\} 1$/m);
  });

  it('a method denied is refused at once', async () => {
    assert.ok((await rpc(app.rpcUrl('sepolia'), 'eth_getBalance', [PROBE, 'latest'])).answer.result);
    await reloadUnderLoad({
      ...file,
      networks: { ...networks(), ...network('sepolia', { deny_methods: ['eth_getBalance'] }) },
    });
    const answer = await rpc(app.rpcUrl('sepolia'), 'eth_getBalance', [PROBE, 'latest']);
    assert.equal(answer.answer.error?.code, -32601);
  });

  it('limits changed apply at once: gateway.max_batch and limits.max_pools_per_account', async () => {
    const batch = JSON.stringify([1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] })));
    assert.equal((await post(app.rpcUrl('sepolia'), batch)).status, 200);
    await reloadUnderLoad({ ...file, gateway: { max_batch: 2 }, limits: { max_pools_per_account: 1 } });
    assert.equal((await post(app.rpcUrl('sepolia'), batch)).status, 413);
    const created = await fetch(`${app.apiUrl}/accounts/${ACCOUNT}/load_balancers/pools`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'one-too-many', origins: [{ name: 'x', address: nodes[0]?.url }] }),
    });
    assert.equal(created.status, 400);
    assert.match(await created.text(), /max_pools_per_account/);
  });

  it('under pools_from_file: apply an origin added to a pool is routed to at once', async () => {
    const balance = () => rpc(app.rpcUrl('holesky'), 'eth_getBalance', [PROBE, 'latest']);
    assert.equal((await balance()).answer.result, '0x0', 'only origin A so far');
    const origins = [
      { name: 'a', address: nodes[0]?.url, weight: 0 },
      { name: 'b', address: nodes[1]?.url },
    ];
    await reloadUnderLoad({ ...file, pools: [{ name: 'main', origins }] });
    assert.equal((await balance()).answer.result, PROBE_BALANCE, 'origin B answers (A has weight 0)');
  });

  it('a file with errors changes nothing, logs every error and counts a failure', async () => {
    const before = await metrics();
    lines.length = 0;
    const outcome = await app.reloadWith({
      ...file,
      gatway: { max_batch: 50 },
      networks: { ...networks(), ...network('extra'), sepolia: { chain_id: 'eleven', pools: ['main'] } },
    });
    assert.equal(outcome.ok, false);
    const paths = outcome.ok ? [] : outcome.errors.map((problem) => problem.path);
    assert.deepEqual(paths.sort(), ['gatway', 'networks.sepolia.chain_id']);
    const logged = lines.filter((line) => line.level === 'error' && line.msg !== undefined);
    assert.deepEqual(
      logged
        .filter((line) => String(line.msg).startsWith('config error'))
        .map((line) => line.path)
        .sort(),
      paths,
      'each error logged with its path',
    );
    assert.ok(logged.some((line) => String(line.msg).startsWith('config reload failed')));
    assert.equal((await rpc(app.rpcUrl('extra'), 'eth_chainId')).status, 404, 'the network was not added');
    assert.equal((await rpc(app.rpcUrl('sepolia'), 'eth_getBalance', [PROBE, 'latest'])).answer.error?.code, -32601);
    const now = await metrics();
    assert.equal(now.reloads, before.reloads + 1);
    assert.equal(now.failures, before.failures + 1);
    assert.equal(now.loaded, before.loaded, 'the config in force was not replaced');
  });

  it('keys that need a restart are logged at warn and kept; the rest of the file applies', async () => {
    lines.length = 0;
    const outcome = await app.reloadWith({
      ...file,
      redis_url: 'redis://127.0.0.1:1',
      gateway: { max_batch: 3, listen: '127.0.0.1:1', workers: 2 },
    });
    assert.deepEqual(outcome.ok && outcome.kept, ['gateway.listen', 'redis_url', 'gateway.workers']);
    const warned = lines.filter((line) => line.level === 'warn' && /needs a restart/.test(String(line.msg)));
    assert.deepEqual(
      warned.map((line) => line.key),
      ['gateway.listen', 'redis_url', 'gateway.workers'],
    );
    for (const line of warned) assert.match(String(line.msg), new RegExp(`^${String(line.key)} needs a restart`));
    // Still served where it was, by this process, without Redis: and max_batch 3 is in force.
    const batch = (n: number) =>
      JSON.stringify(Array.from({ length: n }, (_, id) => ({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] })));
    assert.equal((await post(app.rpcUrl('sepolia'), batch(3))).status, 200);
    assert.equal((await post(app.rpcUrl('sepolia'), batch(4))).status, 413);
  });

  it('gateway.rate_limit and gateway.access_log changed apply from the next call, and back', async () => {
    const call = async () => (await rpc(app.rpcUrl('sepolia'), 'eth_chainId')).status;
    const accessed = () => lines.filter((line) => line.msg === 'access').map((line) => line.status);
    lines.length = 0;
    assert.deepEqual([await call(), await call(), await call()], [200, 200, 200]);
    assert.deepEqual(accessed(), [], 'access_log errors: answered calls write no line');
    const gateway = { rate_limit: { requests_per_second: 0.001, burst: 2 }, access_log: 'all' };
    assert.equal((await app.reloadWith({ ...file, gateway })).ok, true);
    assert.deepEqual([await call(), await call(), await call()], [200, 200, 429], 'a burst of 2, then limited');
    assert.deepEqual(accessed(), [200, 200, 429], 'access_log all: a line per request');
    assert.equal((await app.reloadWith(file)).ok, true);
    lines.length = 0;
    assert.deepEqual([await call(), await call(), await call()], [200, 200, 200], 'no limit any more');
    assert.deepEqual(accessed(), []);
  });
});
