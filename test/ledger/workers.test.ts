/**
 * With `gateway.workers: 2` (SPEC §11) the sends the workers accept reach the control process's ledger
 * (cluster/relayed-sends.ts): `serve` as a child in front of a real anvil (mining each transaction), six
 * transactions sent over fresh connections — so both workers take some — are all recorded, with the
 * client's address, and followed to `included` (SPEC §19).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { type CliProcess, runCli, spawnCli, waitForWorkersServing, writeWorkersConfig } from '../helpers/cli.js';
import { freshCall } from '../helpers/http.js';
import { waitFor } from '../notifications/helpers.js';
import { ALICE, signTransfer } from './helpers.js';

const ACCOUNT = '5317c4a1d00d5317c4a1d00d5317c4a1';

test('sends through two gateway workers are recorded by the control process and followed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-ledger-workers-'));
  let node: AnvilNode | undefined;
  let proc: CliProcess | undefined;
  t.after(async () => {
    if (proc !== undefined) {
      proc.kill('SIGTERM');
      await proc.waitForExit(30_000).catch(() => proc?.kill('SIGKILL'));
    }
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  node = await startTestAnvil();
  const config = writeWorkersConfig(dir, [
    'networks: { sepolia: { chain_id: 11155111, pools: [p], head_poll_interval: 0.1 } }',
    'pools:',
    `  - { name: p, origins: [{ name: a, address: "${node.url}" }] }`,
  ]);
  proc = spawnCli(['serve', '--config', config]);
  const started = await waitForWorkersServing(proc);
  const rpcUrl = `${started.gateway as string}/v1/sepolia`;
  const api = started.api as string;
  const made = await runCli(['token', 'create', '--account', ACCOUNT, '--read-only', '--config', config]);
  assert.equal(made.code, 0, made.stderr);
  const token = made.stdout.trim();

  const hashes: string[] = [];
  for (let nonce = 0; nonce < 6; nonce += 1) {
    const { body } = await freshCall(rpcUrl, 'eth_sendRawTransaction', [await signTransfer(ALICE, nonce)]);
    assert.equal(typeof body.result, 'string', JSON.stringify(body));
    hashes.push(body.result as string);
  }
  const listed = await waitFor(
    async () => {
      const res = await fetch(`${api}/accounts/${ACCOUNT}/gateway/transactions?status=included`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const list = ((await res.json()) as { result: Array<{ hash: string }> }).result;
      return list.length === hashes.length ? list : undefined;
    },
    'every send recorded and included',
    30_000,
  );
  assert.deepEqual(listed.map((tx) => tx.hash).sort(), [...hashes].sort());
  // Both workers took calls (node:cluster hands connections out in turn).
  const metrics = await (await fetch(`${api.replace(/\/client\/v4$/, '')}/metrics`)).text();
  for (const worker of ['1', '2']) {
    const line = metrics
      .split('\n')
      .find((l) => l.startsWith(`switchyard_gateway_worker_requests_total{worker="${worker}"}`));
    assert.ok(Number(line?.split(' ').at(-1)) > 0, `worker ${worker} served calls`);
  }
});
