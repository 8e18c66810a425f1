/**
 * Verified answers with `gateway.workers: 2` (SPEC §18, §11): `serve` as a child process, two workers, in
 * front of a real anvil whose first pool is a lying proxy (balances altered, in eth_getBalance and in
 * eth_getProof). Calls on fresh connections (spread over both workers) all get the honest balance with
 * `X-Switchyard-Verified: proof` — each worker holds the control's trusted block — and the liar's
 * failures, counted in every worker, reach the control process: the summed metric and one open
 * `origin_integrity` incident naming the liar.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { type CliProcess, runCli, spawnCli, waitForWorkersServing, writeWorkersConfig } from '../helpers/cli.js';
import { call, waitFor } from '../helpers/devnet-chain.js';
import { type LyingOrigin, startLyingOrigin } from '../helpers/lying-origin.js';
import { GATEWAY_LIES } from '../helpers/verify-lies.js';

const ACCOUNT = '5317c4a1d00d5317c4a1d00d5317c4a1';
const ADDRESS = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const dir = mkdtempSync(join(tmpdir(), 'switchyard-workers-verified-'));
let anvil: AnvilNode | undefined;
let liar: LyingOrigin | undefined;
let proc: CliProcess | undefined;

after(async () => {
  proc?.kill('SIGKILL');
  await liar?.close();
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** eth_getBalance on a connection of its own (node:cluster hands each to the next worker). */
function freshBalance(url: string): Promise<{ header: string | undefined; result: unknown }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [ADDRESS, 'latest'] });
    const headers = { 'content-type': 'application/json', connection: 'close' };
    const req = http.request(url, { method: 'POST', agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => {
        const header = res.headers['x-switchyard-verified'];
        resolve({ header: typeof header === 'string' ? header : undefined, result: JSON.parse(text).result });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('verified answers with gateway workers', () => {
  it('every worker verifies against the control’s anchor; failures reach the control', async () => {
    anvil = await startTestAnvil();
    await call(anvil.url, 'anvil_mine', ['0x2']);
    liar = await startLyingOrigin(anvil.url, GATEWAY_LIES.balance);
    const config = writeWorkersConfig(dir, [
      `account_id: ${ACCOUNT}`,
      'networks:',
      '  sepolia: { chain_id: 11155111, pools: [lying, honest], head_poll_interval: 100ms, verify: proofs }',
      'pools:',
      `  - { name: lying, origins: [{ name: liar, address: "${liar.url}" }] }`,
      `  - { name: honest, origins: [{ name: honest, address: "${anvil.url}" }] }`,
    ]);
    proc = spawnCli(['serve', '--config', config]);
    const started = await waitForWorkersServing(proc);
    const honest = await call(anvil.url, 'eth_getBalance', [ADDRESS, 'latest']);
    const url = `${started.gateway}/v1/sepolia`;
    // The workers' replicas hold the control's trusted block once a chain-state push brought it.
    await waitFor(async () => (await freshBalance(url)).header === 'proof', 'a proven answer', 30_000);
    for (let i = 0; i < 12; i += 1) {
      const answer = await freshBalance(url);
      assert.equal(answer.result, honest);
      assert.equal(answer.header, 'proof');
    }
    const made = await runCli(['token', 'create', '--account', ACCOUNT, '--read-only', '--config', config]);
    assert.equal(made.code, 0, made.stderr);
    const token = made.stdout.trim();
    const metric = async () => {
      const text = await (await fetch(`${new URL(String(started.api)).origin}/metrics`)).text();
      const prefix = 'switchyard_verify_failures_total{network="sepolia",origin="liar",method="eth_getBalance"} ';
      return Number(
        text
          .split('\n')
          .find((line) => line.startsWith(prefix))
          ?.slice(prefix.length) ?? 0,
      );
    };
    await waitFor(async () => (await metric()) >= 12, 'the failures counted over both workers', 15_000);
    const incidents = async () => {
      const res = await fetch(`${started.api}/accounts/${ACCOUNT}/gateway/incidents?status=open`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const body = (await res.json()) as { result: Array<{ kind: string; data: { origins?: string[] } }> };
      return body.result.filter((incident) => incident.kind === 'origin_integrity');
    };
    await waitFor(async () => (await incidents()).length === 1, 'the integrity incident', 15_000);
    assert.deepEqual((await incidents())[0]?.data.origins, ['liar']);
    proc.kill('SIGTERM');
    assert.equal((await proc.waitForExit(30_000)).code, 0);
  });
});
