/**
 * WebSocket control frames count (SPEC §20), with a real anvil origin and real `ws` clients:
 *   - a client that floods pings and never reads: the pongs `ws` queues for it count toward
 *     `gateway.websocket.max_pending_bytes`, so the connection closes with 1008 "slow consumer" once
 *     that much waits, and the memory of a spawned `switchyard serve` (VmRSS and VmHWM read from
 *     /proc/<pid>/status) grows by a bounded amount, also after the client left; another client keeps
 *     its answers meanwhile. The flood is 300 000 ping frames of 125 bytes written straight to the
 *     client's socket (with the pongs not counted, the server grew by ~100 MB);
 *   - more than `gateway.websocket.max_pings_per_second` pings within a second close the connection with
 *     1008 "too many pings" (in-process app); pings at the limit leave it open; others are unaffected.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { type CliProcess, spawnCli } from '../helpers/cli.js';
import { send } from '../helpers/http.js';

const MAX_PENDING = 1_048_576;
const PINGS = 300_000;
/** What the flood may add to the serve process's memory (generous; unbounded pongs added ~390 MB). */
const RSS_BOUND_MB = 64;

const dir = mkdtempSync(join(tmpdir(), 'switchyard-ws-control-'));
let node: AnvilNode;
let serve: CliProcess | undefined;
let gateway: string;
let api: string;

before(async () => {
  node = await startTestAnvil();
});
after(async () => {
  if (serve !== undefined) {
    serve.kill('SIGTERM');
    await serve.waitForExit(30_000).catch(() => serve?.kill('SIGKILL'));
  }
  await node?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A memory figure of a process, in MB, from /proc/<pid>/status (VmRSS now, VmHWM its peak). */
function memoryMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  assert.ok(line, `${field} in /proc/${pid}/status`);
  return Number(line.replace(/\D+/g, '')) / 1024;
}

async function open(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return ws;
}

/** The close code and reason the client gets. */
function closing(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
}

/** `promise`, or a failure naming `what` after 15 s. */
function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not within 15 s: ${what}`)), 15_000);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** One call over an open connection; its parsed answer. */
function ask(ws: WebSocket, method: string, id: number): Promise<{ id: number; result?: unknown }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer to ${method} within 10 s`)), 10_000);
    const onMessage = (data: WebSocket.RawData) => {
      const answer = JSON.parse(String(data)) as { id: number; result?: unknown };
      if (answer.id !== id) return;
      clearTimeout(timer);
      ws.off('message', onMessage);
      resolve(answer);
    };
    ws.on('message', onMessage);
    ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params: [] }));
  });
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Client ping frames (masked, as a client must; a zero mask leaves the payload as is) of 125 bytes each. */
function pingFrames(count: number): Buffer {
  const frame = Buffer.concat([Buffer.from([0x89, 0x80 | 125, 0, 0, 0, 0]), Buffer.alloc(125, 0x70)]);
  return Buffer.concat(Array.from({ length: count }, () => frame));
}

/** Writes `total` ping frames to a raw socket in chunks, waiting for it to drain; stops if it closes. */
async function flood(socket: Socket, total: number): Promise<void> {
  const chunk = pingFrames(8_000);
  for (let sent = 0; sent < total && !socket.destroyed; sent += 8_000) {
    if (!socket.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          socket.off('drain', done);
          socket.off('close', done);
          resolve();
        };
        socket.once('drain', done);
        socket.once('close', done);
      });
    }
  }
}

describe('pongs count toward max_pending_bytes (spawned serve, memory from /proc)', () => {
  before(async () => {
    const config = join(dir, 'serve.yaml');
    writeFileSync(
      config,
      [
        `data_dir: ${join(dir, 'data')}`,
        'gateway:',
        '  listen: "127.0.0.1:0"',
        // The rate of pings is not what this test is about: only the bytes waiting may stop the flood.
        `  websocket: { max_pending_bytes: ${MAX_PENDING}, max_pings_per_second: 100000000 }`,
        'api: { listen: "127.0.0.1:0" }',
        'networks: { sepolia: { chain_id: 11155111, pools: [main] } }',
        `pools: [{ name: main, origins: [{ name: anvil, address: "${node.url}" }] }]`,
        '',
      ].join('\n'),
    );
    serve = spawnCli(['serve', '--config', config]);
    const started = await serve.waitForLog((line) => line.msg === 'switchyard started', 60_000);
    gateway = `${String(started.gateway).replace(/^http/, 'ws')}/v1/sepolia`;
    api = String(started.api).replace(/\/client\/v4$/, '');
  });

  it('a client that floods pings and never reads is closed with 1008; memory stays bounded; others are served', async () => {
    const pid = (serve as CliProcess).pid;
    const other = await open(gateway);
    assert.equal((await ask(other, 'eth_chainId', 1)).result, '0xaa36a7');
    const flooder = await open(gateway);
    const closed = closing(flooder);
    const baseline = memoryMb(pid, 'VmRSS');

    const socket = (flooder as unknown as { _socket: Socket })._socket;
    socket.pause(); // the client never reads: every pong stays queued on the server's side
    const flooding = flood(socket, PINGS);
    // Answers to another client go on meanwhile.
    for (let id = 2; id < 12; id++) assert.equal((await ask(other, 'eth_blockNumber', id)).id, id);
    await flooding;

    const peak = memoryMb(pid, 'VmHWM');
    assert.ok(
      peak - baseline < RSS_BOUND_MB,
      `serve grew from ${baseline.toFixed(0)} MB to a peak of ${peak.toFixed(0)} MB (bound ${RSS_BOUND_MB} MB)`,
    );
    socket.resume(); // now it reads: the pongs that were queued, then the close frame
    assert.deepEqual(await within(closed, 'the close'), { code: 1008, reason: 'slow consumer' });
    assert.equal(other.readyState, WebSocket.OPEN);
    assert.equal((await ask(other, 'eth_chainId', 99)).result, '0xaa36a7');

    // The flooder is gone: one connection left, and the memory stays within the bound.
    await until(async () => {
      const text = (await send(`${api}/metrics`, { method: 'GET' })).text;
      return /^switchyard_gateway_ws_connections 1$/m.test(text);
    }, 'the flooding connection released');
    const left = memoryMb(pid, 'VmRSS');
    assert.ok(left - baseline < RSS_BOUND_MB, `after the client left serve holds ${left.toFixed(0)} MB`);
    const metrics = (await send(`${api}/metrics`, { method: 'GET' })).text;
    assert.match(metrics, /^switchyard_gateway_ws_slow_consumer_closes_total 1$/m);
    other.close();
  });
});

describe('max_pings_per_second (in-process)', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['main'] } },
      pools: [poolOf('main', [node.url])],
      gateway: { websocket: { max_pings_per_second: 10 } },
    });
  });
  after(async () => {
    await app?.close();
  });
  const url = () => app.rpcUrl().replace(/^http/, 'ws');

  it('pings at the limit leave the connection open; one more within the second closes it with 1008', async () => {
    const other = await open(url());
    const calm = await open(url());
    let pongs = 0;
    calm.on('pong', () => {
      pongs += 1;
    });
    for (let i = 0; i < 10; i++) calm.ping();
    await until(() => pongs === 10, 'ten pongs');
    assert.equal(calm.readyState, WebSocket.OPEN);
    assert.equal((await ask(calm, 'eth_chainId', 1)).result, '0xaa36a7');

    const flooder = await open(url());
    const closed = closing(flooder);
    for (let i = 0; i < 50; i++) flooder.ping();
    assert.deepEqual(await within(closed, 'the close'), { code: 1008, reason: 'too many pings' });
    assert.equal(other.readyState, WebSocket.OPEN);
    assert.equal((await ask(other, 'eth_chainId', 2)).result, '0xaa36a7');
    calm.close();
    other.close();
  });
});
