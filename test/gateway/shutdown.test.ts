/**
 * `switchyard serve` exits promptly on SIGTERM even with clients holding connections open to both
 * listeners: an idle keep-alive connection after a request, a connection that never sent a request,
 * and one that sent half a request header. Before src/connections.ts, the last two held each listener's
 * close for the whole `shutdown_grace` (10 s each, one after the other). The devnet runs too (two anvil
 * nodes, stopped by PID), as in the offline default. And a request in flight when SIGTERM arrives is
 * finished (its origin answers after the signal) while new connections are refused. Under npm
 * (`npx switchyard serve`: npm → sh -c → node), a SIGTERM to the wrapper that never reaches serve still
 * stops it, because serve follows its parent.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isPidAlive, waitForPidsGone } from '../helpers/anvil.js';
import { type CliProcess, REPO_ROOT, spawnCli } from '../helpers/cli.js';
import { fromChainTracker, startHttpServer, type TestServer } from '../helpers/http.js';
import { spawnDevnetServe } from '../helpers/serve.js';

const EXIT_BOUND_MS = 3_000;

const dir = mkdtempSync(join(tmpdir(), 'switchyard-shutdown-'));
let proc: CliProcess | undefined;
let slowServe: CliProcess | undefined;
let orphan: number | undefined;
let origin: TestServer | undefined;
let anvils: number[] = [];
const sockets: net.Socket[] = [];
const agent = new http.Agent({ keepAlive: true });

after(async () => {
  proc?.kill('SIGKILL');
  slowServe?.kill('SIGKILL');
  if (orphan !== undefined && isPidAlive(orphan)) process.kill(orphan, 'SIGKILL');
  await origin?.close();
  for (const pid of anvils) if (isPidAlive(pid)) process.kill(pid, 'SIGKILL');
  for (const socket of sockets) socket.destroy();
  agent.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** A request over the keep-alive agent; its socket stays open (idle) afterwards. */
function keepAliveRequest(url: string, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { agent, method: body === undefined ? 'GET' : 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A raw TCP connection that sends `text` (maybe nothing); resolves once connected. Reports its close. */
function rawConnection(url: string, text: string): Promise<{ closed: Promise<void> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      if (text !== '') socket.write(text);
      resolve({ closed: new Promise<void>((done) => socket.once('close', () => done())) });
    });
    socket.on('error', () => undefined); // a reset at shutdown is expected
    socket.once('error', reject);
    sockets.push(socket);
  });
}

describe('serve exits promptly after SIGTERM', () => {
  it(`within ${EXIT_BOUND_MS} ms, with idle and half-open client connections on both listeners`, async () => {
    const serve = await spawnDevnetServe(join(dir, 'serve.yaml'), join(dir, 'data'));
    proc = serve.proc;
    anvils = serve.anvils;
    const gateway = serve.gateway;
    const apiRoot = serve.api.replace(/\/client\/v4$/, '');

    const call = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
    assert.equal(await keepAliveRequest(`${gateway}/v1/sepolia`, call), 200);
    assert.equal(await keepAliveRequest(`${apiRoot}/metrics`), 200);
    const raw = await Promise.all(
      [gateway, apiRoot].flatMap((url) => [
        rawConnection(url, ''),
        rawConnection(url, 'POST /v1/sepolia HTTP/1.1\r\nHost: x\r\n'),
      ]),
    );

    const signalled = performance.now();
    proc.kill('SIGTERM');
    const exit = await proc.waitForExit(30_000);
    const took = performance.now() - signalled;
    assert.equal(exit.code, 0, proc.stderr());
    assert.ok(took < EXIT_BOUND_MS, `serve took ${Math.round(took)} ms to exit after SIGTERM`);
    assert.ok(proc.logs.some((line) => line.msg === 'switchyard stopped'));
    await Promise.all(raw.map((connection) => connection.closed));
    assert.deepEqual(await waitForPidsGone(anvils, 5_000), [], 'no anvil node is left');
  });
});

describe('serve finishes a request in flight on SIGTERM', () => {
  it('answers it after the signal, refuses new connections, then exits 0', async () => {
    let release: (() => void) | undefined;
    origin = await startHttpServer(async (_req, res, body) => {
      const { id } = JSON.parse(body) as { id: unknown };
      // Only the client's call is held; the chain tracker's head polls are answered at once.
      if (!fromChainTracker(body)) {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0xslow' }));
    });
    const config = join(dir, 'slow.yaml');
    writeFileSync(
      config,
      [
        `data_dir: ${join(dir, 'slow-data')}`,
        'gateway: { listen: "127.0.0.1:0", cache_max_bytes: 0 }',
        'api: { listen: "127.0.0.1:0" }',
        'networks: { sepolia: { chain_id: 11155111, pools: [slow] } }',
        `pools: [{ name: slow, origins: [{ name: o, address: "${origin.url}" }] }]`,
        '',
      ].join('\n'),
    );
    slowServe = spawnCli(['serve', '--config', config]);
    const started = await slowServe.waitForLog((line) => line.msg === 'switchyard started', 60_000);
    const url = `${started.gateway as string}/v1/sepolia`;
    const inFlight = keepAliveRequest(url, '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}');
    const deadline = Date.now() + 10_000;
    while (release === undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(release, 'the request reached the origin');

    slowServe.kill('SIGTERM');
    await slowServe.waitForLog((line) => line.msg === 'shutting down', 10_000);
    const { hostname, port } = new URL(url);
    const connect = () =>
      new Promise<string>((resolve) => {
        const socket = net.connect(Number(port), hostname);
        socket.once('connect', () => {
          socket.destroy();
          resolve('connected');
        });
        socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
      });
    // The log line comes just before the listeners close, so wait (bounded) for the refusal, while the
    // request in flight is still held open by the origin. A connection that lands in the accept queue
    // as the listener closes is reset (ECONNRESET): still the race, so probe again.
    const refusedBy = Date.now() + 5_000;
    let refused = await connect();
    while ((refused === 'connected' || refused === 'ECONNRESET') && Date.now() < refusedBy) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      refused = await connect();
    }
    assert.equal(refused, 'ECONNREFUSED', 'no new connections once shutting down');
    release();
    assert.equal(await inFlight, 200);
    const exit = await slowServe.waitForExit(EXIT_BOUND_MS);
    assert.equal(exit.code, 0, slowServe.stderr());
  });
});

describe('serve started by npm follows its parent', () => {
  it('shuts down when the npm/sh wrapper is killed and the signal does not reach it', async () => {
    const config = join(dir, 'npm.yaml');
    writeFileSync(
      config,
      [
        `data_dir: ${join(dir, 'npm-data')}`,
        'gateway: { listen: "127.0.0.1:0" }',
        'api: { listen: "127.0.0.1:0" }',
        '',
      ].join('\n'),
    );
    // Like npm's `sh -c` wrapper: the trailing `:` keeps the shell from exec-ing node, so node is its child.
    const command = `"${process.execPath}" --import tsx src/cli/run.ts serve --config "${config}"; :`;
    const wrapper = spawn('/bin/sh', ['-c', command], {
      cwd: REPO_ROOT,
      env: { ...process.env, npm_command: 'exec' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const seen = (text: string) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "${text}" within 60 s\n${stderr}`)), 60_000);
        const check = () => {
          if (!stderr.includes(text)) return;
          clearTimeout(timer);
          wrapper.stderr.off('data', check);
          resolve();
        };
        wrapper.stderr.on('data', check);
        check();
      });
    wrapper.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await seen('"switchyard started"');
    const children = readFileSync(`/proc/${wrapper.pid}/task/${wrapper.pid}/children`, 'utf8').trim();
    orphan = Number(children.split(' ')[0]);
    assert.ok(orphan > 0 && isPidAlive(orphan), `serve runs as the wrapper's child (${children})`);

    wrapper.kill('SIGTERM'); // the shell dies; serve gets no signal and is re-parented
    assert.deepEqual(
      await waitForPidsGone([orphan], 10_000),
      [],
      `serve stopped after its parent went away\n${stderr}`,
    );
    assert.match(stderr, /the npm process that started serve is gone; shutting down/);
  });
});
