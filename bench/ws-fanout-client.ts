/**
 * The fan-out leg's own process (`node --import tsx bench/ws-fanout-client.ts '{"port":…,"chainId":…}'`):
 * the origin that feeds Switchyard's `fanout` network (fanout-origin.ts, HTTP + its `ws_address`) AND the
 * WebSocket clients subscribed to newHeads through Switchyard. Both live in this one process so that the
 * instant a head is pushed to the gateway and the instants it reaches the clients are read from one
 * clock (`performance.now()`): no two processes' clocks are ever compared.
 *
 * It is driven by lines on stdin (`<verb> <JSON>`) and answers each with one line on stdout,
 * `FANOUT <verb> <JSON>` (or `FANOUT error <message>`); ws-legs.ts is the other side:
 * - (start)    listens on 127.0.0.1:port → `FANOUT ready`;
 * - subscribe  waits (bounded) until the gateway's newHeads push subscription is open on the origin,
 *              then opens `connections` WebSockets to `url`, `concurrency` handshakes at a time, each
 *              sending `eth_subscribe(["newHeads"])` and keeping the subscription id it is answered;
 * - heads      `warmup` + `heads` new blocks, one at a time: t0 = performance.now() right before the
 *              origin writes the notification to the gateway's push socket, then each client stamps
 *              performance.now() when its notification's 'message' event fires (the bytes are only
 *              stashed then; they are checked after the round, byte for byte against
 *              `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":<its id>,"result":<the
 *              header the origin pushed>}}`). The round ends when every client has its notification or
 *              after `timeoutMs` (the absent ones are counted missing); the next head follows `gapMs`
 *              later. Per measured head: first, median and last delivery minus t0. The gateway's CPU
 *              (/proc of `pids`) and this process's own are read around the measured heads.
 * - close      closes every client normally (bounded).
 * Bounded as a whole by its parent: ws-legs.ts stops it by PID.
 */

import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';
import { FanoutOrigin } from './fanout-origin.js';
import { cpuByPid } from './procstat.js';
import { roundSpread, type Spread, spread } from './stats.js';

interface Client {
  readonly ws: WebSocket;
  readonly index: number;
  subscription: string;
}

interface Round {
  readonly arrivals: Float64Array;
  readonly raw: Array<Buffer | undefined>;
  count: number;
  extra: number;
  all: () => void;
}

const start = JSON.parse(process.argv[2] ?? '{}') as { port: number; chainId: number };
const clients: Client[] = [];
let round: Round | undefined;
/** Set by `close`: closes from then on are ours, not the gateway's. */
let closing = false;
let closedEarly = 0;
const closeSamples: string[] = [];

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function reply(verb: string, body: unknown): void {
  process.stdout.write(`FANOUT ${verb} ${JSON.stringify(body)}\n`);
}

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await wait(20);
  }
  return true;
}

function openClient(url: string, index: number): Promise<Client> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, skipUTF8Validation: true });
    const fail = (err: Error): void => reject(err);
    ws.once('error', fail);
    ws.once('open', () => {
      ws.send(`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}`);
    });
    ws.once('message', (data: Buffer) => {
      const answer = JSON.parse(data.toString()) as { result?: unknown; error?: unknown };
      if (typeof answer.result !== 'string') {
        ws.terminate();
        reject(new Error(`eth_subscribe answered ${data.toString().slice(0, 200)}`));
        return;
      }
      ws.off('error', fail);
      const client: Client = { ws, index, subscription: answer.result };
      ws.on('message', (note: Buffer) => {
        const now = performance.now();
        const r = round;
        if (r === undefined || r.raw[index] !== undefined) {
          if (r !== undefined) r.extra += 1;
          return;
        }
        r.arrivals[index] = now;
        r.raw[index] = note;
        r.count += 1;
        if (r.count === clients.length) r.all();
      });
      ws.on('error', () => {});
      ws.on('close', (code, reason) => {
        if (!closing) {
          closedEarly += 1;
          if (closeSamples.length < 3) closeSamples.push(`${code} ${reason.toString()}`);
        }
      });
      resolve(client);
    });
  });
}

async function subscribe(settings: { url: string; connections: number; concurrency: number }): Promise<unknown> {
  if (!(await until(() => origin.subscribers > 0, 20_000))) {
    throw new Error("the gateway's newHeads push to the origin did not open within 20 s");
  }
  const began = performance.now();
  const failures: string[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < settings.connections) {
      const index = next++;
      try {
        clients[index] = await openClient(settings.url, index);
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: settings.concurrency }, worker));
  if (failures.length > 0) throw new Error(`${failures.length} connections failed, e.g. ${failures[0]}`);
  return {
    connections: clients.length,
    seconds: (performance.now() - began) / 1000,
    client_rss_bytes: process.memoryUsage().rss,
  };
}

const NOTE_HEAD = '{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"';

async function heads(settings: {
  warmup: number;
  heads: number;
  gapMs: number;
  timeoutMs: number;
  pids: number[];
}): Promise<unknown> {
  const n = clients.length;
  const last: number[] = [];
  const first: number[] = [];
  const median: number[] = [];
  const perHead: Array<{ number: number; first_ms: number; median_ms: number; last_ms: number }> = [];
  let missing = 0;
  let wrong = 0;
  let extra = 0;
  const wrongSamples: string[] = [];
  let notificationBytes = 0;
  let cpuStart: Record<string, number> = {};
  let ownStart = process.cpuUsage();
  const cpu = (): Record<string, number> => cpuByPid(settings.pids);
  for (let k = 0; k < settings.warmup + settings.heads; k++) {
    const measured = k >= settings.warmup;
    if (k === settings.warmup) {
      cpuStart = cpu();
      ownStart = process.cpuUsage();
    }
    const head = origin.advance();
    let all = (): void => {};
    const done = new Promise<void>((resolve) => {
      all = resolve;
    });
    const r: Round = { arrivals: new Float64Array(n).fill(Number.NaN), raw: new Array(n), count: 0, extra: 0, all };
    round = r;
    const t0 = performance.now();
    head.push();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, settings.timeoutMs)))]);
    clearTimeout(timer);
    round = undefined;
    extra += r.extra;

    // Off the clock: every delivery checked byte for byte.
    const tail = `","result":${head.headerJson}}}`;
    const times: number[] = [];
    for (const client of clients) {
      const got = r.raw[client.index];
      if (got === undefined) {
        missing += 1;
        continue;
      }
      const want = NOTE_HEAD + client.subscription + tail;
      notificationBytes = Buffer.byteLength(want);
      if (got.toString() !== want) {
        wrong += 1;
        if (wrongSamples.length < 3) wrongSamples.push(got.toString().slice(0, 300));
        continue;
      }
      times.push((r.arrivals[client.index] as number) - t0);
    }
    const s = spread(times);
    if (measured && s !== undefined) {
      const sorted = times.sort((a, b) => a - b);
      last.push(s.max);
      first.push(sorted[0] as number);
      median.push(s.p50);
      perHead.push({
        number: head.number,
        first_ms: round3(sorted[0] as number),
        median_ms: round3(s.p50),
        last_ms: round3(s.max),
      });
    }
    if (k === settings.warmup + settings.heads - 1) break;
    await wait(settings.gapMs);
  }
  const cpuEnd = cpu();
  const own = process.cpuUsage(ownStart);
  const cpuUs: Record<string, number> = {};
  for (const pid of Object.keys(cpuStart)) cpuUs[pid] = (cpuEnd[pid] as number) - (cpuStart[pid] as number);
  const rounded = (values: number[]): Spread | undefined => {
    const s = spread(values);
    return s === undefined ? undefined : roundSpread(s);
  };
  return {
    connections: n,
    heads: settings.heads,
    warmup_heads: settings.warmup,
    notification_bytes: notificationBytes,
    last_delivery_ms: rounded(last),
    first_delivery_ms: rounded(first),
    median_delivery_ms: rounded(median),
    per_head: perHead,
    missing,
    wrong,
    extra,
    closed_early: closedEarly,
    samples: [...wrongSamples, ...closeSamples.map((c) => `closed ${c}`)],
    cpu_us: cpuUs,
    client_cpu_us: own.user + own.system,
  };
}

async function close(): Promise<unknown> {
  closing = true;
  const open = clients.filter((c) => c.ws.readyState === WebSocket.OPEN);
  const closed = Promise.all(open.map((c) => new Promise<void>((resolve) => c.ws.once('close', () => resolve()))));
  for (const c of open) c.ws.close(1000);
  const timedOut = await Promise.race([closed.then(() => false), wait(15_000).then(() => true)]);
  if (timedOut) for (const c of open) c.ws.terminate();
  clients.length = 0;
  return { closed: open.length };
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

const origin = await FanoutOrigin.start(start.port, start.chainId);
reply('ready', { port: start.port });

// One command at a time, in order.
let queue = Promise.resolve();
createInterface({ input: process.stdin }).on('line', (line) => {
  const space = line.indexOf(' ');
  const verb = space < 0 ? line : line.slice(0, space);
  const body = space < 0 ? {} : JSON.parse(line.slice(space + 1));
  queue = queue.then(async () => {
    try {
      if (verb === 'subscribe') reply(verb, await subscribe(body));
      else if (verb === 'heads') reply(verb, await heads(body));
      else if (verb === 'close') reply(verb, await close());
      else throw new Error(`unknown command ${verb}`);
    } catch (err) {
      reply('error', { verb, message: (err as Error).message });
    }
  });
});
process.stdin.on('end', () => {
  void origin.close().then(() => process.exit(0));
});
