/**
 * No single origin moves the chain (SPEC §20) with `gateway.workers: 2`: `serve` as a child process, whose
 * control process owns the chain tracker and whose workers route by its replicas (src/cluster/). The pool
 * `mixed` holds a lying proxy (test/helpers/lying-origin.ts) first and the real anvil it fronts second.
 * For a far head and a forked head (each with a made-up balance at `latest`), first with the chain
 * standing still — the liar's last adopted head is the network head, so only its refusal, pushed to the
 * workers, keeps head-relative calls from it — then while the chain moves on (the far head only: a
 * one-block fork on the real parent races the real block, docs/consistency.md): calls on fresh
 * connections (both workers) never get the lie's head, block or balance; the refusal is counted in the
 * summed /metrics; the monotonic head never takes the lie. Needs `npm run build` (the CLI runs dist/).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { type CliProcess, spawnCli, waitForWorkersServing, writeWorkersConfig } from '../helpers/cli.js';
import { waitFor } from '../helpers/devnet-chain.js';
import { freshCall, send } from '../helpers/http.js';
import {
  type Ask,
  anyOf,
  assertRealHead,
  balanceLie,
  type HeadLieKind,
  headLie,
  type LyingOrigin,
  startLyingOrigin,
} from '../helpers/lying-origin.js';

const PROBE = '0x00000000000000000000000000000000000000aa';
const REAL_BALANCE = '0x1234';
const FAKE_BALANCE = '0xdeadbeef';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-lying-workers-'));
let node: AnvilNode;
let liar: LyingOrigin;
let proc: CliProcess | undefined;
let rpcUrl: string;
let apiRoot: string;

async function call<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const { body } = await freshCall(url, method, params);
  assert.equal(body.error, undefined, `${method}: ${JSON.stringify(body.error)}`);
  return body.result as T;
}

/** One value of the control's summed /metrics (0 when absent). */
async function metric(series: string): Promise<number> {
  const text = (await send(`${apiRoot}/metrics`, { method: 'GET' })).text;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return Number(line?.split(' ').pop() ?? 0);
}

const ORIGIN_HEAD = (origin: string) =>
  `switchyard_chain_origin_head{network="sepolia",pool="mixed",origin="${origin}"}`;
const REFUSED = 'switchyard_chain_head_refused_total{network="sepolia",origin="liar"}';

before(async () => {
  node = await startTestAnvil({ blockTime: 1 });
  await call(node.url, 'anvil_setBalance', [PROBE, REAL_BALANCE]);
  liar = await startLyingOrigin(node.url);
  const config = writeWorkersConfig(dir, [
    'networks: { sepolia: { chain_id: 11155111, pools: [mixed], head_poll_interval: 50ms } }',
    'pools:',
    `  - { name: mixed, origins: [{ name: liar, address: "${liar.url}" }, { name: honest, address: "${node.url}" }] }`,
  ]);
  proc = spawnCli(['serve', '--config', config]);
  const started = await waitForWorkersServing(proc);
  rpcUrl = `${started.gateway as string}/v1/sepolia`;
  apiRoot = (started.api as string).replace(/\/client\/v4$/, '');
});

after(async () => {
  proc?.kill('SIGKILL');
  await liar?.close();
  await node?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** 20 rounds on fresh connections (both workers): the anvil's head, latest block and balance only. */
async function clientsSeeTheRealChain(): Promise<void> {
  const gateway: Ask = (method, params) => call(rpcUrl, method, params);
  const anvil: Ask = (method, params) => call(node.url, method, params);
  for (let i = 0; i < 20; i += 1) await assertRealHead(gateway, anvil, PROBE, REAL_BALANCE);
}

describe('a lying origin with gateway.workers: 2', () => {
  for (const kind of ['far', 'fork'] as HeadLieKind[]) {
    it(`claiming a ${kind} head: refused by the control, and no worker serves the lie`, async () => {
      const refused = await metric(REFUSED);
      await call(node.url, 'evm_setIntervalMining', [0]);
      const real = Number(await call<string>(node.url, 'eth_blockNumber'));
      await waitFor(
        async () =>
          (await metric(ORIGIN_HEAD('liar'))) === real &&
          (await metric('switchyard_chain_head{network="sepolia"}')) === real,
        'both origins at the head',
      );
      liar.lie = anyOf(headLie(kind), balanceLie(FAKE_BALANCE));
      await waitFor(async () => (await metric(REFUSED)) > refused, 'the refusal');
      // The control pushed its chain state to the workers as it refused: a scrape started now asks each
      // worker for its metrics after that push on the same channel, so its answer means they have it.
      await metric(REFUSED);
      await clientsSeeTheRealChain();
      // Then while the real chain moves on. Not for a fork: a made-up block on the real parent at the
      // node's height links as well as the real one does, and with the liar's only pool-mate as the
      // other voice whichever the tracker reads first wins (docs/consistency.md, "What linking cannot
      // tell"; test/chain/lying-origin.test.ts does the same).
      if (kind === 'fork') liar.lie = undefined;
      await call(node.url, 'evm_setIntervalMining', [1]);
      await waitFor(
        async () => (await metric('switchyard_chain_head{network="sepolia"}')) >= real + 2,
        'two more real blocks',
      );
      await clientsSeeTheRealChain();
      liar.lie = undefined;
    });
  }
});
