/**
 * Shared by the chain-incident scenarios: JSON-RPC to an anvil node, a pacer that keeps nodes mining
 * while the scenario wants no head stall, and what to print when a scenario fails.
 *
 * Why a pacer: the scenarios run with `head_stall_after: 2` s, and on a loaded machine their own setup
 * (spawning `serve`, the CLI, policies) takes longer than that — a real stall by the product's rule. So
 * the chain moves every PACE_MS (400 ms, five times under the threshold) in every phase where no stall
 * is wanted, and the scenario stops it where it wants one.
 */
import type { AnvilNode } from '../helpers/anvil.js';
import type { CliProcess } from '../helpers/cli.js';
import type { Receiver } from '../notifications/helpers.js';

export const PACE_MS = 400;

export async function rpc<T>(node: AnvilNode, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(node.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: unknown };
  if (body.error !== undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result as T;
}

export interface Pacer {
  /** Stops mining and waits for the blocks in flight, so the height read next is the last one. */
  stop(): Promise<void>;
}

/** Mines a block on each node every PACE_MS until stopped. */
export function startPacer(nodes: readonly AnvilNode[]): Pacer {
  const inFlight = new Set<Promise<unknown>>();
  const timer = setInterval(() => {
    for (const node of nodes) {
      const mined = rpc(node, 'evm_mine').catch(() => undefined);
      inFlight.add(mined);
      void mined.finally(() => inFlight.delete(mined));
    }
  }, PACE_MS);
  let stopped: Promise<void> | undefined;
  return {
    stop() {
      stopped ??= (async () => {
        clearInterval(timer);
        await Promise.all([...inFlight]);
      })();
      return stopped;
    },
  };
}

/** Height of a node (after a pacer stopped: where the head rests). */
export async function height(node: AnvilNode): Promise<number> {
  return Number(await rpc<string>(node, 'eth_blockNumber'));
}

/**
 * For a failed scenario: each `serve`'s chain and incident log lines and every webhook request (id,
 * status answered, type, event, correlation id, block), so the report shows which incident came when.
 */
export function describeRun(processes: readonly CliProcess[], receiver: Receiver): string {
  const lines: string[] = [];
  for (const [i, child] of processes.entries()) {
    lines.push(`serve #${i + 1} (pid ${child.pid}):`);
    for (const log of child.logs) {
      if (!/incident|chain|stall|reorg|started|stopped|fail|error/i.test(String(log.msg))) continue;
      const { time, msg, block_number, fork_point, depth, err } = log as Record<string, unknown>;
      lines.push(`  ${String(time)} ${String(msg)} ${JSON.stringify({ block_number, fork_point, depth, err })}`);
    }
  }
  lines.push('webhook requests:');
  for (const request of receiver.requests) {
    try {
      const body = JSON.parse(request.body) as {
        alert_type?: string;
        alert_event?: string;
        alert_correlation_id?: string;
        data?: { block_number?: number };
      };
      lines.push(
        `  ${String(request.headers['webhook-id'])} ${body.alert_type} ${body.alert_event} ` +
          `corr=${body.alert_correlation_id} block=${body.data?.block_number}`,
      );
    } catch {
      lines.push(`  ${String(request.headers['webhook-id'])} (not JSON)`);
    }
  }
  return lines.join('\n');
}
