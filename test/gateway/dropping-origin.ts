/**
 * An origin in front of a real node that loses parts of batch answers, for the failover half of
 * batch-equivalence.test.ts (a node:http server on a free port, forwarding to `target` with fetch).
 *
 * Batch bodies (a JSON array): 1 in 10 is answered HTTP 502 and 1 in 20 `[]` without being forwarded
 * (the origin fails as a whole: the gateway must send the batch to the next origin); the rest are
 * forwarded, each answer element is left out with probability 0.3, and the ones kept come back in
 * shuffled order (raw bytes, never re-serialised). Single bodies: the chain tracker's head polls,
 * writes and eth_getTransactionByHash (the check after a resent write, below) pass through; other single reads are answered HTTP 502 with probability 0.25, so a call the
 * gateway fetches again on its own after a dropped element sometimes has to come from the next origin.
 * After each `reseed` the first batch is answered 502, the second `[]`, the third loses its first
 * answer element and the first single read is answered 502, so every kind of loss happens in a run
 * whatever the draws. The draws come from a mulberry32 stream; `stats` counts what happened. With
 * `lossy: false` it only forwards and counts (to show that batches went upstream as batches).
 */
import { fromChainTracker, startHttpServer, type TestServer } from '../helpers/http.js';
import { rawElements } from '../helpers/raw-json.js';
import { Rng } from '../helpers/seeded-rng.js';

export interface DroppingStats {
  batches: number;
  /** Answer elements left out of forwarded batches. */
  dropped: number;
  /** Batches answered 502 or `[]`. */
  wholeFailures: number;
  singles: number;
  /** Single reads answered 502. */
  singleFailures: number;
}

export interface DroppingOrigin {
  readonly url: string;
  readonly stats: DroppingStats;
  reseed(seed: number): void;
  close(): Promise<void>;
}

const WRITE = /"method"\s*:\s*"eth_send(Raw)?Transaction"/;
/**
 * The gateway's check after a send is answered "already imported" (does this origin have that very
 * transaction?) is an eth_getTransactionByHash to the same origin alone: it passes through like a
 * write, so a resent write is answered the same (its hash) as on the gateway whose origin never fails.
 */
const SEND_CHECK = /"method"\s*:\s*"eth_getTransactionByHash"/;

export async function startDroppingOrigin(target: string, { lossy = true } = {}): Promise<DroppingOrigin> {
  let rng = new Rng(1);
  /** Batches and single reads seen since the last reseed. */
  let batchesSinceSeed = 0;
  let readsSinceSeed = 0;
  const stats: DroppingStats = { batches: 0, dropped: 0, wholeFailures: 0, singles: 0, singleFailures: 0 };
  const forward = async (body: string): Promise<string> => {
    const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return res.text();
  };
  const server: TestServer = await startHttpServer(async (_req, res, body) => {
    res.setHeader('content-type', 'application/json');
    const fail = () => {
      res.statusCode = 502;
      res.end('bad gateway');
    };
    if (body.trimStart().startsWith('[')) {
      stats.batches += 1;
      if (!lossy) return void res.end(await forward(body));
      batchesSinceSeed += 1;
      const roll = batchesSinceSeed === 1 ? 0 : batchesSinceSeed === 2 ? 0.12 : rng.next();
      if (roll < 0.15) {
        stats.wholeFailures += 1;
        if (roll < 0.1) return fail();
        return void res.end('[]');
      }
      const kept = rawElements(await forward(body)).filter((_, i) => {
        const drop = rng.chance(0.3) || (batchesSinceSeed === 3 && i === 0);
        if (drop) stats.dropped += 1;
        return !drop;
      });
      for (let i = kept.length - 1; i > 0; i -= 1) {
        const j = rng.int(i + 1);
        [kept[i], kept[j]] = [kept[j] as string, kept[i] as string];
      }
      return void res.end(`[${kept.join(',')}]`);
    }
    if (!fromChainTracker(body)) {
      stats.singles += 1;
      const read = lossy && !WRITE.test(body) && !SEND_CHECK.test(body);
      if (read) readsSinceSeed += 1;
      if (read && (rng.chance(0.25) || readsSinceSeed === 1)) {
        stats.singleFailures += 1;
        return fail();
      }
    }
    res.end(await forward(body));
  });
  return {
    url: server.url,
    stats,
    reseed: (seed) => {
      rng = new Rng(seed);
      batchesSinceSeed = 0;
      readsSinceSeed = 0;
    },
    close: () => server.close(),
  };
}
