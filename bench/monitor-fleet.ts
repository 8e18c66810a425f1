/**
 * The management leg's fleet of origins (`node --import tsx bench/monitor-fleet.ts '{"ports":4,"origins":10000}'`),
 * its own process so its CPU is never counted as Switchyard's: a few node:http listeners on 127.0.0.1
 * (port 0 each) that stand for `origins` separate origins. Origin i is the address
 * `http://127.0.0.1:<port i mod ports>/o/<i>`: the path tells the origins apart, so every origin is a
 * check of its own even though they share listeners.
 *
 * Answers, fast and fixed (the bench measures Switchyard, not the origins):
 * - POST with a JSON-RPC call: `eth_chainId` → 0x1, `eth_syncing` → false, `eth_blockNumber` → a fixed
 *   height; anything else -32601. The answer echoes the call's id.
 * - GET (an `http` monitor): 200 `ok`.
 * One check of origin i is counted per GET, or per `eth_chainId` POST (the first of a jsonrpc check's
 * three calls). For each origin the fleet keeps the count since the last reset, the time of its last
 * check, and the longest gap between two checks seen since the reset.
 *
 * Control (not an origin path): `GET /fleet/reset` zeroes counts and gaps (last-check times are kept,
 * so the first gap after a reset is a real one); `GET /fleet/counts` answers
 * `{"counts":[…],"max_gap_ms":[…],"since_last_ms":[…],"unknown":n}` per origin index, where `since_last_ms`
 * is the time since its last check (-1: never) and `unknown` counts requests to no origin's path.
 * Prints `FLEET ready {"ports":[…]}` once listening. Stopped by its parent, by PID.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';

const settings = JSON.parse(process.argv[2] ?? '{}') as { ports?: number; origins?: number };
const listeners = Math.max(1, settings.ports ?? 4);
const origins = Math.max(1, settings.origins ?? 10_000);

const counts = new Uint32Array(origins);
const lastCheck = new Float64Array(origins).fill(-1);
const maxGap = new Float64Array(origins);
let unknown = 0;

const HEIGHT = '0x1312d00';

function originIndex(url: string | undefined): number {
  if (url === undefined || !url.startsWith('/o/')) return -1;
  const n = Number(url.slice(3));
  return Number.isInteger(n) && n >= 0 && n < origins ? n : -1;
}

function checked(index: number): void {
  const now = performance.now();
  const last = lastCheck[index] as number;
  if (last >= 0) maxGap[index] = Math.max(maxGap[index] as number, now - last);
  lastCheck[index] = now;
  counts[index] = (counts[index] as number) + 1;
}

function send(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function control(url: string, res: ServerResponse): void {
  if (url === '/fleet/reset') {
    counts.fill(0);
    maxGap.fill(0);
    unknown = 0;
    send(res, 200, '{"ok":true}');
    return;
  }
  const now = performance.now();
  send(
    res,
    200,
    JSON.stringify({
      counts: Array.from(counts),
      max_gap_ms: Array.from(maxGap, (gap) => Math.round(gap)),
      since_last_ms: Array.from(lastCheck, (at) => (at < 0 ? -1 : Math.round(now - at))),
      unknown,
    }),
  );
}

function answer(text: string): string {
  let call: { id?: unknown; method?: unknown };
  try {
    call = JSON.parse(text) as { id?: unknown; method?: unknown };
  } catch {
    return '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}';
  }
  const id = JSON.stringify(call.id ?? null);
  switch (call.method) {
    case 'eth_chainId':
      return `{"jsonrpc":"2.0","id":${id},"result":"0x1"}`;
    case 'eth_syncing':
      return `{"jsonrpc":"2.0","id":${id},"result":false}`;
    case 'eth_blockNumber':
      return `{"jsonrpc":"2.0","id":${id},"result":"${HEIGHT}"}`;
    default:
      return `{"jsonrpc":"2.0","id":${id},"error":{"code":-32601,"message":"not served by the bench fleet"}}`;
  }
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '';
  if (url.startsWith('/fleet/')) {
    req.resume();
    control(url, res);
    return;
  }
  const index = originIndex(url);
  if (index < 0) unknown += 1;
  if (req.method !== 'POST') {
    req.resume();
    if (index >= 0) checked(index);
    send(res, 200, 'ok', 'text/plain');
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const text = Buffer.concat(chunks).toString();
    // Only the first call of a jsonrpc check counts, so one check is one count whatever the type.
    if (index >= 0 && text.includes('"eth_chainId"')) checked(index);
    send(res, 200, answer(text));
  });
}

async function listen(): Promise<Server> {
  const server = createServer({ keepAliveTimeout: 60_000 }, handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return server;
}

const servers = await Promise.all(Array.from({ length: listeners }, () => listen()));
const ports = servers.map((server) => {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
});
process.stdout.write(`FLEET ready ${JSON.stringify({ ports })}\n`);
process.on('SIGTERM', () => {
  for (const server of servers) server.close();
  process.exit(0);
});
