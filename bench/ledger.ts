/**
 * What following the transaction ledger costs per block (SPEC §19; docs/benchmarks.md "Ledger"):
 * `node --import tsx bench/ledger.ts [--blocks N] [--sizes 100,10000,100000] [--txs 200]`.
 *
 * For each ledger size N, a fresh SQLite store holds N pending records (distinct senders), which a
 * Ledger takes over at start (as after a restart) and follows on a scripted chain (test/helpers/
 * ledger-chain.ts: the origins answer from memory, the block parsed from JSON text as an origin's would
 * be). Then each new head brings a block of 200 transactions (`--txs`), of which INCLUDED_PER_BLOCK (2) are followed
 * records (they become included, and final `finality_depth` blocks later) and the rest strangers. Measured:
 * the process's CPU (user + system, process.cpuUsage) from the head until the follower and its store
 * writes are done, per block — median and p90 over `--blocks` (default 40) after 5 unmeasured ones.
 * The claim: the figure does not grow with N.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ManualClock } from '../src/clock.js';
import { buildConfig } from '../src/config/load.js';
import { Ledger } from '../src/ledger/ledger.js';
import { insertRecords, type NewRecord } from '../src/ledger/queries.js';
import { silentLogger } from '../src/log.js';
import { openStore } from '../src/store/database.js';
import { blockHash, ScriptedChain, ScriptedOrigins, type ScriptedTx } from '../test/helpers/ledger-chain.js';

let BLOCK_TXS = 200;
const INCLUDED_PER_BLOCK = 2;
const WARMUP_BLOCKS = 5;

const hex = (n: number, width: number): string => `0x${n.toString(16).padStart(width, '0')}`;

function pendingRecord(i: number, at: string): NewRecord {
  return {
    network: 'sepolia',
    hash: hex(i + 1, 64),
    accountId: 'a'.repeat(32),
    from: hex(1_000_000 + i, 40),
    nonce: 0,
    keyId: null,
    client: '127.0.0.1',
    origins: ['p/o0'],
    raw: '0x00',
    owner: 'an-instance-that-stopped',
    at,
  };
}

/** Block n: INCLUDED_PER_BLOCK followed records (by index), the rest strangers. */
function blockTransactions(n: number): ScriptedTx[] {
  const txs: ScriptedTx[] = [];
  for (let k = 0; k < INCLUDED_PER_BLOCK; k += 1) {
    const i = (n - 1) * INCLUDED_PER_BLOCK + k;
    txs.push({ hash: hex(i + 1, 64), from: hex(1_000_000 + i, 40), nonce: 0 });
  }
  while (txs.length < BLOCK_TXS) {
    const s = n * BLOCK_TXS + txs.length;
    txs.push({ hash: hex(0x7000_0000 + s, 64), from: hex(9_000_000 + s, 40), nonce: s });
  }
  return txs;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
}

async function measure(size: number, blocks: number): Promise<{ median: number; p90: number; setupS: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-ledger-'));
  const clock = new ManualClock('2026-05-10T12:00:00Z');
  const config = buildConfig(
    { data_dir: dir, networks: { sepolia: { chain_id: 11_155_111, pools: ['p'], finality_depth: 3 } } },
    'bench',
  );
  const store = await openStore({ data_dir: dir });
  const chain = new ScriptedChain();
  const origins = new ScriptedOrigins();
  const ledger = new Ledger({ config, store, clock, logger: silentLogger });
  try {
    const started = performance.now();
    const at = new Date(clock.now()).toISOString();
    for (let i = 0; i < size; i += 500) {
      const batch = [];
      for (let k = i; k < Math.min(size, i + 500); k += 1) batch.push(pendingRecord(k, at));
      await insertRecords(store.db, batch);
    }
    await ledger.start({ chain, calls: origins });
    await ledger.settled();
    const setupS = (performance.now() - started) / 1000;
    const total = WARMUP_BLOCKS + blocks;
    for (let n = 1; n <= total; n += 1) origins.setBlock(blockHash(n), blockTransactions(n));
    const samples: number[] = [];
    for (let n = 1; n <= total; n += 1) {
      const before = process.cpuUsage();
      chain.emitHead(n);
      await ledger.settled();
      const spent = process.cpuUsage(before);
      if (n > WARMUP_BLOCKS) samples.push(spent.user + spent.system);
    }
    samples.sort((a, b) => a - b);
    return { median: percentile(samples, 0.5), p90: percentile(samples, 0.9), setupS };
  } finally {
    await ledger.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '40' },
    sizes: { type: 'string', default: '100,10000,100000' },
    txs: { type: 'string', default: '200' },
  },
});
BLOCK_TXS = Number(values.txs);
const blocks = Number(values.blocks);
const sizes = String(values.sizes)
  .split(',')
  .map((size) => Number(size));
console.log(
  `Following the ledger: CPU per block of ${BLOCK_TXS} transactions (${INCLUDED_PER_BLOCK} of them followed)`,
);
console.log('');
console.log('| pending records | CPU per block, median | p90 | set-up (s) |');
console.log('|---:|---:|---:|---:|');
for (const size of sizes) {
  const result = await measure(size, blocks);
  console.log(
    `| ${size.toLocaleString('en-US')} | ${Math.round(result.median)} µs | ${Math.round(result.p90)} µs | ${result.setupS.toFixed(1)} |`,
  );
}
