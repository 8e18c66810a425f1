/**
 * The load client of the WebSocket request/answer leg (`wsread`): wrk cannot speak WebSocket, so this
 * separate Node process (`node --import tsx bench/ws-read-client.ts '<settings JSON>'`) drives it with the
 * `ws` library and prints one line `WSLOAD_JSON {…}` (ws-legs.ts reads it).
 *
 * - Opens `connections` WebSockets to `url` (no compression offered; answers are compared as bytes, so
 *   the client skips UTF-8 validation).
 * - Each connection keeps `inflight` requests in flight — ids 1..inflight, each sent again as soon as
 *   its answer came: a closed loop like wrk's, whose HTTP/1.1 connections hold one request each.
 * - `warmupSeconds` of unmeasured load on the same connections, then the measured window of `seconds`:
 *   the answers received in it count; a latency is the answer's arrival minus its request's send
 *   (`performance.now()`, one process, one clock).
 * - Every answer must equal, byte for byte, the expected answer for its id; anything else, or a
 *   connection that closes, is an error (the first few are kept as samples).
 * - CPU: `utime + stime` of each of `pids` (the gateway, the upstream) from /proc at the window's start
 *   and end, and this process's own (`process.cpuUsage`), so the report can show what the client cost.
 * - Bounded: whatever happens, the process exits warm-up + seconds + 20 s after it started.
 */
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { cpuByPid } from './procstat.js';
import { spread } from './stats.js';

export interface WsReadSettings {
  url: string;
  connections: number;
  inflight: number;
  seconds: number;
  warmupSeconds: number;
  /** The request and its answer for id 1; other ids replace `"id":1,` in both. */
  request: string;
  response: string;
  /** Processes whose CPU time is read at the window's edges. */
  pids: number[];
}

export interface WsReadOutcome {
  requests: number;
  duration_s: number;
  latency_ms?: { p50: number; p90: number; p99: number; mean: number; max: number };
  /** Per pid: microseconds of CPU (utime + stime) over the window; `<pid>:system` the stime part. */
  cpu_us: Record<string, number>;
  client_cpu_us: number;
  errors: { wrong_answer: number; closed: number; socket: number };
  samples: string[];
}

const settings = JSON.parse(process.argv[2] ?? '{}') as WsReadSettings;
const ID_ONE = '"id":1,';

function forId(text: string, id: number): Buffer {
  if (!text.includes(ID_ONE)) throw new Error(`no ${ID_ONE} in ${text.slice(0, 80)}`);
  return Buffer.from(text.replace(ID_ONE, `"id":${id},`));
}

const requests: Buffer[] = [];
const answers: Buffer[] = [];
for (let id = 1; id <= settings.inflight; id++) {
  requests[id] = forId(settings.request, id);
  answers[id] = forId(settings.response, id);
}

type Phase = 'warmup' | 'measure' | 'drain';
let phase: Phase = 'warmup';
const latencies: number[] = [];
const errors = { wrong_answer: 0, closed: 0, socket: 0 };
const samples: string[] = [];
let outstanding = 0;
let drained: (() => void) | undefined;

function sample(text: string): void {
  if (samples.length < 5) samples.push(text.slice(0, 300));
}

function openOne(): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(settings.url, { perMessageDeflate: false, skipUTF8Validation: true });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

function drive(ws: WebSocket): void {
  const sentAt = new Float64Array(settings.inflight + 1);
  const send = (id: number): void => {
    sentAt[id] = performance.now();
    outstanding += 1;
    ws.send(requests[id] as Buffer, { binary: false });
  };
  ws.on('message', (data: Buffer) => {
    const now = performance.now();
    outstanding -= 1;
    // Which id: the answers differ only there, and `inflight` is small.
    let id = 0;
    for (let k = 1; k <= settings.inflight; k++) {
      if ((answers[k] as Buffer).equals(data)) {
        id = k;
        break;
      }
    }
    if (id === 0) {
      errors.wrong_answer += 1;
      sample(`unexpected answer: ${data.toString()}`);
    } else if (phase === 'measure') {
      latencies.push(now - (sentAt[id] as number));
    }
    if (phase === 'drain') {
      if (outstanding === 0) drained?.();
      return;
    }
    // After a wrong answer its id is unknown: keep the loop going with id 1's slot.
    send(id === 0 ? 1 : id);
  });
  ws.on('error', (err) => {
    errors.socket += 1;
    sample(`socket error: ${err.message}`);
  });
  ws.on('close', (code, reason) => {
    if (phase !== 'drain') {
      errors.closed += 1;
      sample(`closed ${code} ${reason.toString()}`);
    }
  });
  for (let id = 1; id <= settings.inflight; id++) send(id);
}

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<WsReadOutcome> {
  const sockets = await Promise.all(Array.from({ length: settings.connections }, openOne));
  for (const ws of sockets) drive(ws);
  await wait(settings.warmupSeconds * 1000);

  const cpu = (): Record<string, number> => cpuByPid(settings.pids);
  const cpuStart = cpu();
  const ownStart = process.cpuUsage();
  const start = performance.now();
  phase = 'measure';
  await wait(settings.seconds * 1000);
  phase = 'drain';
  const duration = (performance.now() - start) / 1000;
  const cpuEnd = cpu();
  const own = process.cpuUsage(ownStart);

  // The answers still in flight come back (bounded), then every connection closes normally.
  if (outstanding > 0) await Promise.race([new Promise<void>((resolve) => (drained = resolve)), wait(5_000)]);
  for (const ws of sockets) ws.close(1000);
  const cpuUs: Record<string, number> = {};
  for (const pid of Object.keys(cpuStart)) cpuUs[pid] = (cpuEnd[pid] as number) - (cpuStart[pid] as number);
  const s = spread(latencies);
  return {
    requests: latencies.length,
    duration_s: duration,
    ...(s === undefined ? {} : { latency_ms: s }),
    cpu_us: cpuUs,
    client_cpu_us: own.user + own.system,
    errors,
    samples,
  };
}

const bound = setTimeout(
  () => {
    process.stderr.write('ws-read-client: did not finish in time\n');
    process.exit(3);
  },
  (settings.warmupSeconds + settings.seconds + 20) * 1000,
);
bound.unref();

main().then(
  (outcome) => {
    process.stdout.write(`WSLOAD_JSON ${JSON.stringify(outcome)}\n`);
    process.exitCode = 0;
    // The closing handshakes normally end the process; a peer that does not answer them must not hold it.
    setTimeout(() => process.exit(0), 2_000).unref();
  },
  (err: Error) => {
    process.stderr.write(`ws-read-client: ${err.message}\n`);
    process.exitCode = 1;
  },
);
