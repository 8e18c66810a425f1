/**
 * The SPEC §16 metric families after real traffic through two pools (and two more networks): a scripted
 * node:http origin in front of a real anvil plays each failure an origin can give (429, a provider's
 * rate-limit answer, 500, garbage, an answer to another id, its own JSON-RPC error, a reset connection)
 * chosen by the X-Request-Id the test sends (each throttling asks for no wait, so the origin is not
 * benched for the next call), a second origin never answers (timeout) and a third is a closed port (connect); the backup pool
 * is the anvil itself. Then /metrics holds every new family with exactly its documented labels, the
 * per-origin outcomes and durations add up, 50 made-up method names leave the `method` label set bounded,
 * and build_info, the process and runtime series and switchyard_origin_healthy are there.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { STANDARD_METHODS, SUBSCRIPTION_METHODS } from '../../src/gateway/rpc/methods.js';
import { ORIGIN_OUTCOMES } from '../../src/gateway/upstream/origin-outcome.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { post, relay, startHttpServer, type TestServer } from '../helpers/http.js';
import { type PromText, samplesOf, scrape, sumOf } from '../helpers/prometheus.js';

let anvil: AnvilNode;
let flaky: TestServer;
let stuck: TestServer;
let app: TestApp;
let closedPort: number;

/** What the scripted origin does with a client call, by the request id the gateway passed on. */
async function scripted(req: http.IncomingMessage, res: http.ServerResponse, body: string): Promise<void> {
  const id = req.headers['x-request-id'];
  const mode = typeof id === 'string' ? id.split('-')[0] : undefined;
  const ours = (JSON.parse(body) as { id?: unknown }).id;
  switch (mode) {
    case 'throttle':
      res.writeHead(429, { 'retry-after': '0' }).end('slow down');
      return;
    case 'ratelimit': {
      const error = { code: -32005, message: 'project ID request rate exceeded', data: { backoff_seconds: 0.001 } };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: ours, error }));
      return;
    }
    case 'status':
      res.writeHead(500).end('boom');
      return;
    case 'garbage':
      res.writeHead(200, { 'content-type': 'application/json' }).end('this is not json');
      return;
    case 'wrongid':
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":987654321,"result":[]}');
      return;
    case 'error':
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: ours, error: { code: -32000, message: 'origin says no' } }));
      return;
    case 'reset':
      req.socket.destroy();
      return;
    default:
      // Head polls of the chain tracker carry no request id: the origin follows the anvil chain.
      await relay(res, anvil.url, body);
  }
}

before(async () => {
  anvil = await startTestAnvil();
  flaky = await startHttpServer(scripted);
  // Client calls (they carry a request id) never get an answer; head polls do.
  stuck = await startHttpServer(async (req, res, body) => {
    if (req.headers['x-request-id'] === undefined) await relay(res, anvil.url, body);
  });
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  closedPort = (closed.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  app = await startApp({
    gateway: { request_timeout: 1 },
    networks: {
      sepolia: { chain_id: 11155111, pools: ['primary', 'backup'] },
      slow: { chain_id: 11155111, pools: ['stuck', 'backup'] },
      deadnet: { chain_id: 11155111, pools: ['gone'] },
    },
    pools: [
      { name: 'primary', origins: [{ name: 'flaky', address: flaky.url }] },
      { name: 'backup', origins: [{ name: 'anvil', address: anvil.url }] },
      { name: 'stuck', origins: [{ name: 'hang', address: stuck.url }] },
      { name: 'gone', origins: [{ name: 'closed', address: `http://127.0.0.1:${closedPort}` }] },
    ],
  });
});

after(async () => {
  await app?.close();
  await flaky?.close();
  await stuck?.close();
  await anvil?.stop();
});

const ACCOUNTS = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_accounts', params: [] });

/** One eth_accounts call on `network` with this request id; returns the HTTP status. */
async function accounts(network: string, requestId: string): Promise<number> {
  return (await post(app.rpcUrl(network), ACCOUNTS, { 'x-request-id': requestId })).status;
}

describe('metrics after traffic', () => {
  let prom: PromText;

  before(async () => {
    // Each failure of the primary's origin is retried on the backup pool: the client sees 200.
    // (A rate-limit answer benches the origin for at least its 1 ms back-off: last, before the other networks.)
    for (const mode of ['ok', 'throttle', 'status', 'garbage', 'wrongid', 'error', 'ratelimit']) {
      assert.equal(await accounts('sepolia', `${mode}-1`), 200, mode);
    }
    assert.equal(await accounts('slow', 'hang-1'), 200, 'the stuck origin times out, the backup answers');
    assert.equal(await accounts('deadnet', 'dead-1'), 502, 'the only origin refuses connections');
    // Last: a reset connection takes the flaky origin out of rotation.
    assert.equal(await accounts('sepolia', 'reset-1'), 200);
    const names = Array.from({ length: 50 }, (_, i) => `made_up_${i}_${Math.random().toString(36).slice(2)}`);
    const batch = names.map((method, i) => ({ jsonrpc: '2.0', id: i, method, params: [] }));
    assert.equal((await post(app.rpcUrl('sepolia'), JSON.stringify(batch))).status, 200);
    prom = await scrape(app.apiUrl);
  });

  it('switchyard_origin_requests_total counts each attempt on an origin by outcome', () => {
    const flakyCount = (outcome: string) =>
      sumOf(prom, 'switchyard_origin_requests_total', {
        network: 'sepolia',
        pool: 'primary',
        origin: 'flaky',
        outcome,
      });
    assert.equal(flakyCount('ok'), 1);
    assert.equal(flakyCount('throttled'), 2, '429 and a rate-limit answer → throttled');
    assert.equal(flakyCount('http_status'), 1, '500 → http_status');
    assert.equal(flakyCount('bad_answer'), 2, 'garbage and an answer to another id → bad_answer');
    assert.equal(flakyCount('error_answer'), 1, "the origin's own error → error_answer");
    assert.equal(flakyCount('connect'), 1, 'a reset connection → connect');
    const backup = { network: 'sepolia', pool: 'backup', origin: 'anvil', outcome: 'ok' };
    assert.equal(sumOf(prom, 'switchyard_origin_requests_total', backup), 6, 'the six retried calls');
    const hang = { network: 'slow', pool: 'stuck', origin: 'hang' };
    assert.equal(sumOf(prom, 'switchyard_origin_requests_total', { ...hang, outcome: 'timeout' }), 1);
    const gone = { network: 'deadnet', pool: 'gone', origin: 'closed' };
    assert.ok(sumOf(prom, 'switchyard_origin_requests_total', { ...gone, outcome: 'connect' }) >= 1);
    for (const sample of samplesOf(prom, 'switchyard_origin_requests_total')) {
      assert.deepEqual(Object.keys(sample.labels).sort(), ['network', 'origin', 'outcome', 'pool']);
      assert.ok(ORIGIN_OUTCOMES.includes(sample.labels.outcome as never), sample.labels.outcome);
    }
    assert.equal(prom.types.get('switchyard_origin_requests_total'), 'counter');
  });

  it('switchyard_origin_request_duration_seconds has one observation per counted attempt', () => {
    assert.equal(prom.types.get('switchyard_origin_request_duration_seconds'), 'histogram');
    for (const origin of ['flaky', 'anvil', 'hang', 'closed']) {
      const counted = sumOf(prom, 'switchyard_origin_requests_total', { origin });
      const observed = sumOf(prom, 'switchyard_origin_request_duration_seconds_count', { origin });
      assert.ok(counted > 0, origin);
      assert.equal(observed, counted, origin);
    }
    for (const sample of samplesOf(prom, 'switchyard_origin_request_duration_seconds_count')) {
      assert.deepEqual(Object.keys(sample.labels).sort(), ['network', 'origin', 'pool']);
    }
    const hang = samplesOf(prom, 'switchyard_origin_request_duration_seconds_sum', { origin: 'hang' })[0];
    assert.ok((hang?.value ?? 0) >= 0.9, 'the timed-out attempt lasted its request_timeout (1 s)');
  });

  it('switchyard_rpc_requests_total counts every call by standard method (else other) and outcome', () => {
    const rpc = (where: Record<string, string>) => sumOf(prom, 'switchyard_rpc_requests_total', where);
    assert.equal(rpc({ network: 'sepolia', method: 'eth_accounts', outcome: 'ok' }), 7);
    assert.equal(rpc({ network: 'sepolia', method: 'eth_accounts', outcome: 'error_answer' }), 1);
    assert.equal(rpc({ network: 'slow', method: 'eth_accounts', outcome: 'ok' }), 1);
    assert.equal(rpc({ network: 'deadnet', method: 'eth_accounts', outcome: 'failed' }), 1);
    assert.equal(rpc({ network: 'sepolia', method: 'other', outcome: 'refused' }), 50);
    const allowed = new Set([...Object.keys(STANDARD_METHODS), ...SUBSCRIPTION_METHODS, 'other']);
    for (const sample of samplesOf(prom, 'switchyard_rpc_requests_total')) {
      assert.deepEqual(Object.keys(sample.labels).sort(), ['method', 'network', 'outcome']);
      assert.ok(allowed.has(sample.labels.method as string), `unbounded method label ${sample.labels.method}`);
      assert.ok(['ok', 'error_answer', 'refused', 'failed'].includes(sample.labels.outcome as string));
    }
    assert.ok(!prom.samples.some((s) => Object.values(s.labels).some((v) => v.startsWith('made_up_'))));
  });

  it('switchyard_origin_healthy is 0 for the origin live traffic took out, 1 for the others', () => {
    const healthy = (network: string, pool: string, origin: string) =>
      samplesOf(prom, 'switchyard_origin_healthy', { network, pool, origin }).map((s) => s.value);
    assert.deepEqual(healthy('deadnet', 'gone', 'closed'), [0], 'a refused connection ejects at once');
    assert.deepEqual(healthy('sepolia', 'primary', 'flaky'), [1], 'one reset is a strike, not an ejection');
    assert.deepEqual(healthy('sepolia', 'backup', 'anvil'), [1]);
    assert.deepEqual(healthy('slow', 'backup', 'anvil'), [1]);
    assert.equal(prom.types.get('switchyard_origin_healthy'), 'gauge');
  });

  it('build_info and the process and runtime series are exported', () => {
    const [build] = samplesOf(prom, 'switchyard_build_info');
    assert.equal(build?.value, 1);
    assert.match(build?.labels.version ?? '', /^\d+\.\d+\.\d+/);
    assert.equal(build?.labels.node, process.versions.node);
    assert.match(build?.labels.commit ?? '', /^([0-9a-f]{7,40}|unknown)$/);
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_open_fds',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_total_bytes',
      'nodejs_heap_size_used_bytes',
    ]) {
      const [sample] = samplesOf(prom, name);
      assert.ok(sample !== undefined && Number.isFinite(sample.value) && sample.value >= 0, name);
    }
    assert.ok(sumOf(prom, 'process_resident_memory_bytes') > 10_000_000);
    assert.equal(prom.types.get('process_cpu_seconds_total'), 'counter');
  });

  it('no origin address appears in a label', () => {
    for (const sample of prom.samples) {
      for (const value of Object.values(sample.labels)) assert.ok(!value.includes('127.0.0.1'), value);
    }
  });
});
