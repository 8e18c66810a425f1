/**
 * What a verified answer costs (SPEC §18, docs/verification.md): `eth_getBalance` and `eth_call` at
 * `latest`, each with `verify: proofs` beside `verify: off`, against a Switchyard of its own (same runtime
 * as the run's) in front of a real anvil of its own, driven by wrk like the other legs (legs.ts `runLeg`):
 *   verify-balance-off, verify-balance-proofs, verify-call-off, verify-call-proofs.
 * The anvil holds a contract reading two storage slots (deployed at the start); the network has two
 * pools (the trust anchor's quorum of 2), each one counting proxy in front of the anvil (stall-proxy.ts,
 * never stalling), heads polled once an hour. `verify.origin_calls_per_request` is what the proxies got
 * during the measured load ÷ the client requests: 1 for `off`; with `proofs` the origin calls one
 * verified call costs (eth_getProof, eth_createAccessList, eth_getCode, …; the trusted header is kept).
 * Skipped with --no-anvil, or without wrk or the CLI. Run it briefly (`--only verify --seconds 3`): the
 * machine may be shared.
 */
import { createRequire } from 'node:module';
import { Child } from './child.js';
import type { LegResult } from './legs.js';
import { runLeg, skippedLeg } from './legs.js';
import type { BenchOptions } from './options.js';
import { freePort } from './ports.js';
import { StallProxy } from './stall-proxy.js';
import { SwitchyardProcess } from './switchyard.js';

export interface VerifyLegContext {
  readonly wrk: string | undefined;
  readonly workDir: string;
  readonly options: BenchOptions;
  readonly compiledCli: string | undefined;
  readonly log: (line: string) => void;
}

/** What a verify leg adds to its result. */
export interface VerifyFigures {
  readonly mode: 'off' | 'proofs';
  /** Calls the origins got per client request (1 = no extra call). */
  readonly origin_calls_per_request?: number;
}

/** Runtime: slot 0 + slot 1 as one word. Init: slot 0 = 7, slot 1 = 11, then the runtime's 15 bytes. */
const RUNTIME = '6000546001540160005260206000f3';
const INIT = `0x6007600055600b600155600f6016600039600f6000f3${RUNTIME}`;
/** anvil's first development account (unlocked: eth_sendTransaction works). */
const FUNDED = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const CHAIN_ID = 31_337;

const LEGS = [
  ['balance', 'off'],
  ['balance', 'proofs'],
  ['call', 'off'],
  ['call', 'proofs'],
] as const;

export async function runVerifyLegs(context: VerifyLegContext): Promise<LegResult[]> {
  const { options } = context;
  const chosen = LEGS.filter(([what, mode]) => selectedLeg(options, `verify-${what}-${mode}`));
  const placeholder = (id: string) => ({
    id,
    scenario: 'verify' as const,
    target: 'switchyard' as const,
    connections: options.connections,
    exchange: { request: '', response: '' },
  });
  const missing = !options.anvil ? '--no-anvil' : context.wrk === undefined ? 'wrk unavailable' : undefined;
  if (missing !== undefined)
    return chosen.map(([what, mode]) => skippedLeg(placeholder(`verify-${what}-${mode}`), missing));
  const port = await freePort();
  const binary = createRequire(import.meta.url).resolve('@foundry-rs/anvil-linux-amd64/bin/anvil');
  const anvil = new Child('anvil', binary, ['--host', '127.0.0.1', '--port', String(port), '--quiet']);
  const node = `http://127.0.0.1:${port}/`;
  const proxies: StallProxy[] = [];
  let server: SwitchyardProcess | undefined;
  try {
    await anvil.waitForPort(port, 30_000);
    const contract = await deploy(node);
    proxies.push(await StallProxy.start(node, 1), await StallProxy.start(node, 2));
    const pools = proxies.map((proxy, i) => ({ name: `v${i}`, origins: [{ name: 'o', address: proxy.url }] }));
    const network = (verify: string) => ({ chain_id: CHAIN_ID, pools: ['v0', 'v1'], head_poll_interval: '1h', verify });
    server = await SwitchyardProcess.start({
      workDir: context.workDir,
      routes: {},
      name: 'switchyard-verify',
      config: { networks: { off: network('off'), proofs: network('proofs') }, pools },
      ...(context.compiledCli === undefined ? {} : { compiledCli: context.compiledCli }),
    });
    const results: LegResult[] = [];
    for (const [what, mode] of chosen) {
      const id = `verify-${what}-${mode}`;
      const call =
        what === 'balance'
          ? { method: 'eth_getBalance', params: [FUNDED, 'latest'] }
          : { method: 'eth_call', params: [{ to: contract, data: '0x' }, 'latest'] };
      const request = JSON.stringify({ jsonrpc: '2.0', id: 1, ...call });
      const response = JSON.stringify({ jsonrpc: '2.0', id: 1, result: await rpc(node, call.method, call.params) });
      const plan = {
        ...placeholder(id),
        exchange: { request, response },
        url: `${server.gatewayUrl}/v1/${mode}`,
        serverPid: server.pid,
        upstreamPid: anvil.pid,
      };
      context.log(`bench: ${id}: ${options.seconds} s, ${plan.connections} connection(s)…`);
      for (const proxy of proxies) proxy.reset(1);
      const result = await runLeg(plan, {
        wrk: context.wrk as string,
        workDir: context.workDir,
        seconds: options.seconds,
        warmupSeconds: options.warmupSeconds,
        threads: options.threads,
      }).catch((err: Error): LegResult => ({ ...skippedLeg(plan, err.message), status: 'failed' }));
      const calls = proxies.reduce((sum, proxy) => sum + proxy.calls, 0);
      const figures: VerifyFigures = {
        mode,
        ...(result.requests ? { origin_calls_per_request: Math.round((calls / result.requests) * 1000) / 1000 } : {}),
      };
      const title = `${call.method} at latest, verify: ${mode}`;
      context.log(`bench: ${id}: ${result.status}${result.rps === undefined ? '' : `, ${result.rps} req/s`}`);
      results.push({ ...result, title, verify: figures });
    }
    return results;
  } catch (err) {
    return chosen.map(([what, mode]) => ({
      ...skippedLeg(placeholder(`verify-${what}-${mode}`), (err as Error).message),
      status: 'failed' as const,
    }));
  } finally {
    await server?.stop();
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await anvil.stop();
  }
}

function selectedLeg(options: BenchOptions, id: string): boolean {
  return options.only.length === 0 || options.only.some((f) => id.includes(f));
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** Deploys the two-slot contract from anvil's unlocked account (automining); its address. */
async function deploy(node: string): Promise<string> {
  const hash = await rpc(node, 'eth_sendTransaction', [{ from: FUNDED, data: INIT, gas: '0x100000' }]);
  const receipt = (await rpc(node, 'eth_getTransactionReceipt', [hash])) as { contractAddress?: string } | null;
  if (typeof receipt?.contractAddress !== 'string') throw new Error('the bench contract was not deployed');
  return receipt.contractAddress;
}
