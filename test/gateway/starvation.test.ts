/**
 * No client starves the gateway (SPEC §8): slow readers of large streamed answers cannot hold the
 * origin connections (per-client stream slots, stalled streams cut after gateway.stream_stall_timeout,
 * their origin connections freed); a call that waits for a busy origin connection gets 503 / -32002
 * GATEWAY_BUSY after request_timeout and never counts against the origin's health; a planned origin with
 * a free connection is used rather than waiting on a busy one; the listener's connection limits refuse
 * extra connections while the earlier ones and the API keep working.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { post } from '../helpers/http.js';
import { waitFor } from '../http1/servers.js';
import {
  type BigOrigin,
  bigAnswerLength,
  callOn,
  capturingLogger,
  idleConnection,
  LOGS_CALL,
  metric,
  SMALL_CALL,
  type StalledClient,
  stalledCall,
  startBigOrigin,
} from './starvation-fixtures.js';

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function origin(): Promise<BigOrigin> {
  const started = await startBigOrigin();
  cleanups.push(() => started.close());
  return started;
}

async function app(raw: Record<string, unknown>, logger?: ReturnType<typeof capturingLogger>): Promise<TestApp> {
  const started = await startApp(raw, logger === undefined ? {} : { logger: logger.logger });
  cleanups.push(() => started.close());
  return started;
}

/** Log lines that would mean an origin was blamed: a failed attempt, or one taken out of rotation. */
function blamed(lines: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return lines.filter(
    (line) => line.msg === 'origin attempt failed' || line.msg === 'origin taken out of rotation by live traffic',
  );
}

describe('slow readers of large streamed answers', () => {
  it('~100 stalled streams from one client: ordinary calls keep succeeding, the stalls are cut and their origin connections come back', async () => {
    const big = await origin();
    const logs = capturingLogger();
    const gateway = await app(
      {
        networks: { sepolia: { chain_id: 11155111, pools: ['big'] } },
        pools: [poolOf('big', [big.url])],
        gateway: { stream_stall_timeout: '1s', request_timeout: '5s' },
      },
      logs,
    );
    const rpcUrl = gateway.rpcUrl();

    const stalled: StalledClient[] = [];
    for (let i = 0; i < 100; i += 1) stalled.push(stalledCall(rpcUrl, LOGS_CALL));
    cleanups.push(async () => {
      for (const client of stalled) client.socket.destroy();
    });

    // Ordinary calls while the slow readers hold what they can: every one answered by the origin.
    for (let round = 0; round < 10; round += 1) {
      const answers = await Promise.all([1, 2, 3].map(() => post(rpcUrl, SMALL_CALL)));
      for (const res of answers) {
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json<{ result?: string }>().result, '0x10');
      }
    }

    // Every slow reader got the start of an answer: a stream (200, then cut) or GATEWAY_BUSY.
    await waitFor(
      () => stalled.every((client) => client.status !== undefined),
      'every slow reader to be answered',
      20_000,
    );
    const streamed = stalled.filter((client) => client.status === 200);
    const busy = stalled.filter((client) => client.status === 503);
    assert.equal(streamed.length + busy.length, 100);
    // At most max_streams_per_client (4) stream at once and as many wait for a slot, holding an origin
    // connection each; the others were refused at once and their origin connections closed.
    // (Bounded well inside stream_stall_timeout, 1 s: the refused ones' origin connections close at once.)
    await waitFor(() => big.inFlight <= 8, 'at most 4 streaming and 4 waiting answers to hold the origin', 500);
    assert.ok(streamed.length >= 4, `${streamed.length} streamed`);
    assert.ok(busy.length >= 50, `${busy.length} refused`);
    for (const client of busy) {
      assert.match(client.first, /"code":-32002/);
      assert.match(client.first, /gateway busy/);
    }

    // The stalled streams are cut after stream_stall_timeout: no origin answer is left being written.
    await waitFor(() => big.inFlight === 0, 'the stalled answers to release their origin connections', 20_000);
    assert.ok((await metric(gateway.apiUrl, 'switchyard_gateway_streams_cut_total')) >= streamed.length);

    // The origin connections came back: a large answer to a client that reads goes through whole.
    const res = await post(rpcUrl, LOGS_CALL);
    assert.equal(res.status, 200);
    assert.equal(res.text.length, bigAnswerLength('7'));

    // The origin was never blamed (no failed attempt, no ejection), and no attempt timed out.
    assert.deepEqual(blamed(logs.lines), []);
    assert.equal(
      await metric(gateway.apiUrl, 'switchyard_gateway_upstream_attempts_total{network="sepolia",result="timeout"}'),
      0,
    );
    assert.ok(
      (await metric(gateway.apiUrl, 'switchyard_gateway_upstream_attempts_total{network="sepolia",result="busy"}')) >=
        busy.length,
    );
  });
});

describe('waiting for a free origin connection', () => {
  it('answers 503 / -32002 "gateway busy" after request_timeout and never blames the origin', async () => {
    const big = await origin();
    const logs = capturingLogger();
    const gateway = await app(
      {
        networks: { sepolia: { chain_id: 11155111, pools: ['one'] } },
        pools: [poolOf('one', [big.url])],
        gateway: { connections_per_origin: 1, request_timeout: '500ms' },
      },
      logs,
    );
    const rpcUrl = gateway.rpcUrl();
    // A large answer its client does not read holds the only origin connection (stall timeout: 30 s).
    const holder = stalledCall(rpcUrl, LOGS_CALL);
    cleanups.push(async () => {
      holder.socket.destroy();
    });
    await waitFor(() => holder.status === 200, 'the large answer to start streaming');

    // More calls than the strikes that would eject an origin for timeouts (health/view.ts: 3).
    for (let i = 0; i < 4; i += 1) {
      const started = performance.now();
      const res = await post(rpcUrl, SMALL_CALL);
      const waited = performance.now() - started;
      assert.equal(res.status, 503, res.text);
      const error = res.json<{ error: { code: number; message: string } }>().error;
      assert.equal(error.code, -32002);
      assert.match(error.message, /^gateway busy/);
      assert.ok(waited >= 450, `answered after ${waited} ms, before request_timeout`);
    }

    // The holder leaves: its origin connection is closed, and the origin, never blamed, answers at once.
    holder.socket.destroy();
    await waitFor(() => big.inFlight === 0, 'the held origin answer to end');
    const res = await post(rpcUrl, SMALL_CALL);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(blamed(logs.lines), []);
    assert.equal(
      await metric(gateway.apiUrl, 'switchyard_gateway_upstream_attempts_total{network="sepolia",result="busy"}'),
      4,
    );
  });

  it('a planned origin with a free connection is used instead of waiting on a busy one', async () => {
    const first = await origin();
    const second = await origin();
    const gateway = await app({
      networks: { sepolia: { chain_id: 11155111, pools: ['two'] } },
      pools: [poolOf('two', [first.url, second.url])],
      gateway: { connections_per_origin: 1, request_timeout: '5s', max_attempts: 2 },
    });
    const rpcUrl = gateway.rpcUrl();
    const holder = stalledCall(rpcUrl, LOGS_CALL);
    cleanups.push(async () => {
      holder.socket.destroy();
    });
    await waitFor(() => holder.status === 200, 'the large answer to start streaming');

    // Whichever origin the random steering puts first, no call waits for the busy one's connection.
    for (let i = 0; i < 10; i += 1) {
      const started = performance.now();
      const res = await post(rpcUrl, SMALL_CALL);
      assert.equal(res.status, 200, res.text);
      assert.ok(performance.now() - started < 2_000, 'answered without waiting for the busy origin');
    }
  });
});

describe('listener connection limits', () => {
  it('max_connections_per_client: extra connections are closed, the earlier ones and the API keep working', async () => {
    const big = await origin();
    const gateway = await app({
      networks: { sepolia: { chain_id: 11155111, pools: ['one'] } },
      pools: [poolOf('one', [big.url])],
      gateway: { max_connections_per_client: 5 },
    });
    const rpcUrl = gateway.rpcUrl();
    const admitted = Array.from({ length: 5 }, () => idleConnection(gateway.gatewayUrl));
    cleanups.push(async () => {
      for (const c of admitted) c.socket.destroy();
    });
    // Each of the five is served (so each was admitted before the extra ones are opened).
    for (const c of admitted) assert.equal(await callOn(c.socket, rpcUrl, SMALL_CALL), 200);

    const extra = Array.from({ length: 3 }, () => idleConnection(gateway.gatewayUrl));
    cleanups.push(async () => {
      for (const c of extra) c.socket.destroy();
    });
    await waitFor(() => extra.every((c) => c.closed), 'the extra connections to be closed');
    for (const c of admitted) {
      assert.equal(c.closed, false);
      assert.equal(await callOn(c.socket, rpcUrl, SMALL_CALL), 200);
    }
    const api = await fetch(`${new URL(gateway.apiUrl).origin}/metrics`);
    assert.equal(api.status, 200);
    assert.match(
      await api.text(),
      /switchyard_gateway_connections_refused_total\{limit="max_connections_per_client"\} 3/,
    );

    // A connection that closes frees its place.
    admitted[0]?.socket.destroy();
    await waitFor(() => admitted[0]?.closed === true, 'the first connection to close');
    // (The gateway may see the close a moment after the client: a new connection is retried, bounded.)
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt += 1) {
      const again = idleConnection(gateway.gatewayUrl);
      status = await callOn(again.socket, rpcUrl, SMALL_CALL).catch(() => 0);
      again.socket.destroy();
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 20)); // pacing the retries
    }
    assert.equal(status, 200);
  });

  it('max_connections: connections beyond it are closed, the earlier ones and the API keep working', async () => {
    const big = await origin();
    const gateway = await app({
      networks: { sepolia: { chain_id: 11155111, pools: ['one'] } },
      pools: [poolOf('one', [big.url])],
      gateway: { max_connections: 3 },
    });
    const rpcUrl = gateway.rpcUrl();
    const admitted = Array.from({ length: 3 }, () => idleConnection(gateway.gatewayUrl));
    cleanups.push(async () => {
      for (const c of admitted) c.socket.destroy();
    });
    for (const c of admitted) assert.equal(await callOn(c.socket, rpcUrl, SMALL_CALL), 200);
    const extra = idleConnection(gateway.gatewayUrl);
    cleanups.push(async () => {
      extra.socket.destroy();
    });
    await waitFor(() => extra.closed, 'the extra connection to be closed');
    for (const c of admitted) assert.equal(await callOn(c.socket, rpcUrl, SMALL_CALL), 200);
    const api = await fetch(`${new URL(gateway.apiUrl).origin}/metrics`);
    assert.equal(api.status, 200);
    assert.match(await api.text(), /switchyard_gateway_connections_refused_total\{limit="max_connections"\} 1/);
  });
});
