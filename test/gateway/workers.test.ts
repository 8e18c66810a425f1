/**
 * `gateway.workers: 2` (SPEC §11): `serve` as a child process, two worker processes serving the gateway
 * listener, fed by the control process, against real anvil origins.
 * - Calls over many fresh connections all succeed and both workers answer them (the control's
 *   `/metrics` shows each worker slot's requests, and their sum as the gateway's request count).
 * - A pool disabled through the API is routed around by every worker within 1 s.
 * - A filter made through one worker is polled from its origin through every worker (filter affinity
 *   relayed by the control), also once the pool that would be chosen first is enabled again.
 * - A gateway key's rate limit is one bucket for both workers (leased from the control process); a key
 *   deleted through the API is refused by every worker within 1 s; both workers' usage reaches the store.
 * - A newHeads subscription on a worker gets the block mined on the origin (chain events reach workers).
 * - kill -9 of one worker: it is logged and replaced; calls keep succeeding; the restart is counted; the
 *   new worker serves the filter made earlier from its origin (it got the affinity entry in its init).
 *   The two nodes hold different state (so an answer tells which pool served it), hence different
 *   blocks: the primary's node is the operator's trusted origin (`verify_anchor.origins`, SPEC §20), so
 *   the chain follows it once it mines its own block at the failover node's height.
 * - The gateway port taken: start-up fails naming `gateway.listen`, and no worker is left running.
 * - SIGTERM with a call in flight: the call is answered, a WebSocket connection gets 1001, then serve and
 *   its workers exit 0.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { type AnvilNode, isPidAlive, startTestAnvil, waitForPidsGone } from '../helpers/anvil.js';
import { type CliProcess, runCli, spawnCli } from '../helpers/cli.js';
import { freshCall, fromChainTracker, send, startHttpServer, type TestServer } from '../helpers/http.js';

const ACCOUNT = '5317c4a1d00d5317c4a1d00d5317c4a1';
/** An address funded only on the failover pool's node, so an answer tells which pool served it. */
const PROBE = '0x00000000000000000000000000000000000000aa';
const PROBE_BALANCE = '0x1234';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-workers-'));
const anvils: AnvilNode[] = [];
const procs: CliProcess[] = [];
let slowOrigin: TestServer | undefined;

after(async () => {
  for (const proc of procs) proc.kill('SIGKILL');
  await Promise.all(anvils.map((node) => node.stop()));
  await slowOrigin?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An answer or a notification, as far as these tests read it. */
interface Reply {
  id?: unknown;
  result?: unknown;
  method?: string;
  params?: { subscription?: unknown; result?: { number?: unknown } };
}

/** PIDs of running processes whose environment carries `tag` (a serve started with it and its workers). */
function processesTagged(tag: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(tag) && isPidAlive(Number(pid));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The control's /metrics as { 'name{labels}': value }. */
async function scrape(apiRoot: string): Promise<Map<string, number>> {
  const res = await send(`${apiRoot}/metrics`, { method: 'GET' });
  assert.equal(res.status, 200);
  const out = new Map<string, number>();
  for (const line of res.text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Waits until `call` answers true ten times in a row, within `timeoutMs` (fresh connections alternate
 * between the workers, so ten in a row means both do); a failure names the last answer.
 */
async function tenInARow(what: string, timeoutMs: number, call: () => Promise<{ ok: boolean; answer: unknown }>) {
  let inARow = 0;
  let last: unknown;
  await waitFor(what, timeoutMs, async () => {
    const { ok, answer } = await call();
    last = answer;
    inARow = ok ? inARow + 1 : 0;
    return inARow >= 10 ? true : undefined;
  }).catch((err: Error) => {
    throw new Error(`${err.message}; last answer ${JSON.stringify(last)}`);
  });
}

describe('gateway.workers: 2 against real anvil origins', () => {
  let proc: CliProcess;
  let rpcUrl: string;
  let apiRoot: string;
  let apiBase: string;
  let token: string;
  let workerPids: number[];
  const config = join(dir, 'serve.yaml');

  before(async () => {
    anvils.push(await startTestAnvil(), await startTestAnvil());
    const [primary, failover] = anvils as [AnvilNode, AnvilNode];
    await freshCall(failover.url, 'anvil_setBalance', [PROBE, PROBE_BALANCE]);
    writeFileSync(
      config,
      [
        `data_dir: ${join(dir, 'data')}`,
        'gateway: { listen: "127.0.0.1:0", workers: 2 }',
        'api: { listen: "127.0.0.1:0" }',
        'networks: { sepolia: { chain_id: 11155111, pools: [primary, failover], verify_anchor: { origins: [primary/a] } } }',
        'pools:',
        `  - { name: primary, origins: [{ name: a, address: "${primary.url}" }] }`,
        `  - { name: failover, origins: [{ name: b, address: "${failover.url}" }] }`,
        '',
      ].join('\n'),
    );
    proc = spawnCli(['serve', '--config', config]);
    procs.push(proc);
    const serving = await proc.waitForLog((line) => line.msg === 'gateway workers serving', 60_000);
    workerPids = serving.pids as number[];
    const started = await proc.waitForLog((line) => line.msg === 'switchyard started', 60_000);
    rpcUrl = `${started.gateway as string}/v1/sepolia`;
    apiBase = started.api as string;
    apiRoot = apiBase.replace(/\/client\/v4$/, '');
    const made = await runCli(['token', 'create', '--account', ACCOUNT, '--config', config]);
    assert.equal(made.code, 0, made.stderr);
    token = made.stdout.trim();
  });

  it('serves calls over many connections from both workers, and /metrics sums them', async () => {
    assert.equal(workerPids.length, 2);
    assert.notEqual(workerPids[0], proc.pid);
    const before = await scrape(apiRoot);
    const calls = 40;
    for (let i = 0; i < calls; i += 1) {
      const { status, body } = await freshCall(rpcUrl, 'eth_getBalance', [PROBE, 'latest']);
      assert.equal(status, 200);
      assert.equal(body.result, '0x0', 'the primary pool answers');
    }
    const now = await scrape(apiRoot);
    const delta = (key: string): number => (now.get(key) ?? 0) - (before.get(key) ?? 0);
    const one = delta('switchyard_gateway_worker_requests_total{worker="1"}');
    const two = delta('switchyard_gateway_worker_requests_total{worker="2"}');
    assert.ok(one > 0 && two > 0, `both workers answered: ${one} and ${two}`);
    assert.equal(one + two, calls);
    assert.equal(delta('switchyard_gateway_requests_total{network="sepolia",status="200"}'), calls);
    assert.equal(now.get('switchyard_gateway_workers'), 2);
    // The control's own metrics are there too (its chain tracker, its pool directory).
    assert.ok(now.has('switchyard_pools'));
    // A worker's /readyz: the store as the control process sees it, the pools as pushed.
    const ready = await send(rpcUrl.replace(/\/v1\/sepolia$/, '/readyz'), { method: 'GET' });
    assert.equal(ready.status, 200, ready.text);
    assert.equal((ready.json() as { ready: boolean }).ready, true);
  });

  /** The filter made by the filter test (its origin is the failover pool's node). */
  let filterId: unknown;
  /** A fresh poll of that filter: answered (an array) or not ("filter not found"). */
  async function pollFilter(): Promise<{ ok: boolean; answer: unknown }> {
    const { body } = await freshCall(rpcUrl, 'eth_getFilterChanges', [filterId]);
    return { ok: Array.isArray(body.result), answer: body };
  }

  /** Enables or disables the primary pool through the API. */
  async function setPrimaryEnabled(enabled: boolean): Promise<void> {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const listed = await send(`${apiBase}/accounts/${ACCOUNT}/load_balancers/pools`, { method: 'GET', headers });
    const pool = (listed.json() as { result: Array<{ id: string; name: string }> }).result.find(
      (candidate) => candidate.name === 'primary',
    );
    assert.ok(pool);
    const patched = await send(`${apiBase}/accounts/${ACCOUNT}/load_balancers/pools/${pool.id}`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ enabled }),
    });
    assert.equal(patched.status, 200, patched.text);
  }

  /** A fresh call's balance of PROBE: PROBE_BALANCE from the failover pool's node, 0x0 from the primary's. */
  const probeBalance = async (expected: string) => {
    const { body } = await freshCall(rpcUrl, 'eth_getBalance', [PROBE, 'latest']);
    return { ok: body.result === expected, answer: body };
  };

  it('routes around a pool disabled through the API in every worker within 1 s', async () => {
    const before = await scrape(apiRoot);
    await setPrimaryEnabled(false);
    const changedAt = performance.now();
    // Ten fresh connections in a row answered by the failover pool: both workers have the change.
    await tenInARow('ten calls in a row from the failover pool', 1_000, () => probeBalance(PROBE_BALANCE));
    const took = performance.now() - changedAt;
    assert.ok(took < 1_000, `took ${Math.round(took)} ms`);
    const now = await scrape(apiRoot);
    for (const slot of ['1', '2']) {
      const key = `switchyard_gateway_worker_requests_total{worker="${slot}"}`;
      assert.ok((now.get(key) ?? 0) - (before.get(key) ?? 0) >= 4, `worker ${slot} answered some of them`);
    }
  });

  it('a filter made through one worker is served from its origin by every worker (affinity relayed by the control)', async () => {
    // The primary pool is disabled (the test before), so the filter is made on the failover pool's node.
    const made = await freshCall(rpcUrl, 'eth_newBlockFilter');
    filterId = made.body.result;
    assert.equal(typeof filterId, 'string', JSON.stringify(made.body));
    await setPrimaryEnabled(true);
    await tenInARow('ten calls in a row from the primary pool again', 5_000, () => probeBalance('0x0'));
    // Fresh connections alternate between the workers; the primary's node does not know the filter, so a
    // worker without the affinity entry answers "filter not found" from it.
    await tenInARow('ten filter polls in a row answered', 5_000, pollFilter);
  });

  it("a gateway key's rate limit is shared by both workers: 3× its limit for 5 s admits limit × t + burst ± 10 %", async () => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const limit = { requests_per_second: 20, burst: 20 };
    const made = await send(`${apiBase}/accounts/${ACCOUNT}/gateway/keys`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'shared', rate_limit: limit }),
    });
    assert.equal(made.status, 200, made.text);
    const key = (made.json() as { result: { value: string } }).result.value;
    await waitFor('the key in both workers', 2_000, async () => {
      const answers = await Promise.all([0, 1, 2, 3].map(() => freshCall(rpcUrl, 'eth_chainId', [], key)));
      return answers.every((answer) => answer.status !== 401) ? true : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // the probe calls' tokens refill (pacing, not sync)
    const durationMs = 5_000;
    const started = performance.now();
    const answers: Array<Promise<number>> = [];
    let sent = 0;
    for (;;) {
      const elapsed = performance.now() - started;
      if (elapsed >= durationMs) break;
      const due = Math.floor((elapsed * 3 * limit.requests_per_second) / 1000) + 1;
      for (; sent < due; sent += 1) answers.push(freshCall(rpcUrl, 'eth_chainId', [], key).then((a) => a.status));
      await new Promise((resolve) => setTimeout(resolve, 5)); // the send rate's pacing
    }
    const elapsedMs = performance.now() - started;
    const statuses = await Promise.all(answers);
    const admitted = statuses.filter((status) => status === 200).length;
    const ideal = (limit.requests_per_second * elapsedMs) / 1000 + limit.burst;
    assert.ok(
      statuses.every((status) => status === 200 || status === 429),
      statuses.join(' '),
    );
    // Each worker on its own buckets would admit about twice the ideal.
    assert.ok(admitted >= 0.9 * ideal && admitted <= 1.1 * ideal, `admitted ${admitted} of ${sent}, ideal ${ideal}`);
  });

  it('a gateway key revoked through the API is refused by every worker within 1 s, and its usage counted', async () => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const made = await send(`${apiBase}/accounts/${ACCOUNT}/gateway/keys`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'revoked' }),
    });
    assert.equal(made.status, 200, made.text);
    const { id, value } = (made.json() as { result: { id: string; value: string } }).result;
    let ok = 0;
    await waitFor('ten calls in a row admitted', 2_000, async () => {
      ok = (await freshCall(rpcUrl, 'eth_chainId', [], value)).status === 200 ? ok + 1 : 0;
      return ok >= 10 ? true : undefined;
    });
    await waitFor('the usage of both workers in the store', 5_000, async () => {
      const usage = await send(`${apiBase}/accounts/${ACCOUNT}/gateway/keys/${id}/usage`, { method: 'GET', headers });
      const rows = (usage.json() as { result: Array<{ network: string; requests: number }> }).result;
      // Summed over the days: a run across 00:00 UTC splits the calls between two rows.
      const requests = rows.reduce((sum, row) => sum + (row.network === 'sepolia' ? row.requests : 0), 0);
      return requests >= 10 ? true : undefined;
    });
    const deleted = await send(`${apiBase}/accounts/${ACCOUNT}/gateway/keys/${id}`, { method: 'DELETE', headers });
    assert.equal(deleted.status, 200, deleted.text);
    const revokedAt = performance.now();
    let refused = 0;
    await waitFor('ten calls in a row refused', 1_000, async () => {
      refused = (await freshCall(rpcUrl, 'eth_chainId', [], value)).status === 401 ? refused + 1 : 0;
      return refused >= 10 ? true : undefined;
    });
    assert.ok(performance.now() - revokedAt < 1_000);
  });

  it('delivers newHeads to a subscription on a worker when the origin mines a block', async () => {
    const ws = new WebSocket(rpcUrl.replace(/^http/, 'ws'));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const messages: Reply[] = [];
    ws.on('message', (data) => messages.push(JSON.parse(String(data)) as Reply));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
    const subscription = await waitFor('the subscription id', 10_000, async () => messages.find((m) => m.id === 1));
    assert.equal(typeof subscription.result, 'string', JSON.stringify(subscription));
    await freshCall((anvils[1] as AnvilNode).url, 'evm_mine');
    const head = await waitFor('a newHeads notification', 10_000, async () =>
      messages.find((m) => m.method === 'eth_subscription' && m.params?.subscription === subscription.result),
    );
    assert.equal(head.params?.result?.number, '0x1');
    ws.close();
  });

  it('replaces a worker killed with SIGKILL; calls keep succeeding; the restart is logged and counted', async () => {
    const victim = workerPids[0] as number;
    process.kill(victim, 'SIGKILL');
    const logged = await proc.waitForLog(
      (line) => line.msg === 'gateway worker exited; starting a new one' && line.pid === victim,
      10_000,
    );
    assert.equal(logged.signal, 'SIGKILL');
    for (let i = 0; i < 20; i += 1) {
      const { status, body } = await freshCall(rpcUrl, 'eth_chainId');
      assert.equal(status, 200);
      assert.equal(body.result, '0xaa36a7');
    }
    const metrics = await waitFor('two workers serving again', 15_000, async () => {
      const scraped = await scrape(apiRoot);
      return scraped.get('switchyard_gateway_workers') === 2 ? scraped : undefined;
    });
    assert.equal(metrics.get('switchyard_gateway_worker_restarts_total'), 1);
    assert.equal(isPidAlive(victim), false);
    // The new worker got the filter's affinity entry from the control (relayed before it started). The
    // newHeads test mined a block on the failover pool's node only; once the primary's is at that head
    // too, a worker without the entry sends the poll to the primary's node, which lacks the filter.
    await freshCall((anvils[0] as AnvilNode).url, 'evm_mine');
    await tenInARow('ten head reads in a row from the primary pool again', 10_000, () => probeBalance('0x0'));
    await tenInARow('ten filter polls in a row answered after the restart', 5_000, pollFilter);
  });

  it('exits 0 on SIGTERM with its workers gone', async () => {
    proc.kill('SIGTERM');
    const exit = await proc.waitForExit(30_000);
    assert.equal(exit.code, 0, proc.stderr());
    assert.deepEqual(await waitForPidsGone(workerPids, 5_000), []);
  });
});

describe('gateway.workers: 2 drains on SIGTERM', () => {
  it('answers a call in flight after the signal, closes WebSockets with 1001, then exits 0', async () => {
    let release: (() => void) | undefined;
    slowOrigin = await startHttpServer(async (_req, res, body) => {
      const { id } = JSON.parse(body) as { id: unknown };
      if (!fromChainTracker(body)) {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x5' }));
    });
    const config = join(dir, 'slow.yaml');
    writeFileSync(
      config,
      [
        `data_dir: ${join(dir, 'slow-data')}`,
        'gateway: { listen: "127.0.0.1:0", workers: 2, cache_max_bytes: 0 }',
        'api: { listen: "127.0.0.1:0" }',
        'networks: { sepolia: { chain_id: 11155111, pools: [slow] } }',
        `pools: [{ name: slow, origins: [{ name: o, address: "${slowOrigin.url}" }] }]`,
        '',
      ].join('\n'),
    );
    const proc = spawnCli(['serve', '--config', config]);
    procs.push(proc);
    const serving = await proc.waitForLog((line) => line.msg === 'gateway workers serving', 60_000);
    const started = await proc.waitForLog((line) => line.msg === 'switchyard started', 60_000);
    const ws = new WebSocket(`${(started.gateway as string).replace(/^http/, 'ws')}/v1/sepolia`);
    const wsClosed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const inFlight = freshCall(`${started.gateway as string}/v1/sepolia`, 'eth_blockNumber');
    await waitFor('the call at the origin', 10_000, async () => (release === undefined ? undefined : true));

    proc.kill('SIGTERM');
    await proc.waitForLog((line) => line.msg === 'shutting down', 10_000);
    release?.();
    const answered = await inFlight;
    assert.equal(answered.status, 200);
    assert.equal(answered.body.result, '0x5');
    assert.equal(await wsClosed, 1001, 'the WebSocket connection is closed as going away');
    const exit = await proc.waitForExit(30_000);
    assert.equal(exit.code, 0, proc.stderr());
    assert.deepEqual(await waitForPidsGone(serving.pids as number[], 5_000), []);
  });
});

describe('gateway.workers: 2 when the gateway port is taken', () => {
  it('fails start-up naming gateway.listen, with no worker left behind', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      const config = join(dir, 'busy.yaml');
      writeFileSync(
        config,
        [
          `data_dir: ${join(dir, 'busy-data')}`,
          `gateway: { listen: "127.0.0.1:${port}", workers: 2 }`,
          'api: { listen: "127.0.0.1:0" }',
          'networks: { sepolia: { chain_id: 11155111, pools: [] } }',
          '',
        ].join('\n'),
      );
      const tag = `SWITCHYARD_TEST_TAG=busy-${process.pid}`;
      const proc = spawnCli(['serve', '--config', config], { env: { SWITCHYARD_TEST_TAG: tag.split('=')[1] } });
      procs.push(proc);
      const exit = await proc.waitForExit(60_000);
      assert.equal(exit.code, 1);
      assert.match(
        proc.stderr(),
        new RegExp(
          `gateway\\.listen: 127\\.0\\.0\\.1:${port} \\(set by gateway\\.listen in [^)]*\\) is already in use`,
        ),
      );
      assert.ok(proc.logs.some((line) => line.msg === 'gateway worker could not start'));
      assert.deepEqual(processesTagged(tag), [], 'no worker of that serve is left');
    } finally {
      blocker.close();
    }
  });
});
