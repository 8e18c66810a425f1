/**
 * The requests the load generator sends and the answers the upstream gives. The upstream echoes each
 * request's id around a fixed `result`, so for the client's id the answer is known in advance: a proxy
 * that passes bytes through (splicing the client's id back in) returns exactly `response`. The harness
 * checks that before every leg.
 */

export interface Exchange {
  /** What the client POSTs (id 1, or ids 1..n in a batch). */
  request: string;
  /** What the client must get back. */
  response: string;
}

/** `{"jsonrpc":"2.0","id":<id>,"result":<result JSON>}`, the upstream's answer. */
export function answer(id: number, result: string): string {
  return `{"jsonrpc":"2.0","id":${id},"result":${result}}`;
}

/** JSON text of each scenario's fixed result. */
export const RESULTS = {
  blockNumber: '"0x13a5e7f"',
  chainId: '"0xaa36a7"',
  balance: '"0x1bc16d674ec80000"',
};

/** A single uncacheable read: eth_blockNumber changes with every block. */
export const single: Exchange = {
  request: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
  response: answer(1, RESULTS.blockNumber),
};

/**
 * A lookup by hash (eth_getBlockTransactionCountByHash), never cached: the routing legs' read
 * (routing-legs.ts). A hash lookup needs nothing of an origin's chain position, so every origin of a
 * pool may take it — with the upstream's fixed answers no origin's head can be learned, and a
 * head-relative read would go only to the few origins whose head an answer happened to show.
 */
export const lookup: Exchange = {
  request: `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockTransactionCountByHash","params":["0x${'ab'.repeat(32)}"]}`,
  response: answer(1, RESULTS.blockNumber),
};

/** A read the gateway may answer from its cache: the chain id never changes. */
export const cacheable: Exchange = {
  request: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
  response: answer(1, RESULTS.chainId),
};

/** A batch of uncacheable reads (eth_getBalance at "latest"), ids 1..size. */
export function batch(size = 100): Exchange {
  const requests: string[] = [];
  const responses: string[] = [];
  for (let id = 1; id <= size; id++) {
    requests.push(`{"jsonrpc":"2.0","id":${id},"method":"eth_getBalance","params":["0x${hex40(id)}","latest"]}`);
    responses.push(answer(id, RESULTS.balance));
  }
  return { request: `[${requests.join(',')}]`, response: `[${responses.join(',')}]` };
}

/**
 * An eth_getLogs answer of at least `bytes` bytes (10 MiB by default): realistic log objects, generated
 * deterministically so every run serves the same bytes. `result` is the JSON text of the log array.
 */
export function largeLogs(bytes = 10 * 1_048_576): Exchange & { result: string } {
  const request =
    '{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x1000000","toBlock":"0x1001000"}]}';
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const log =
      `{"address":"0x${hex40(i % 97)}","topics":["0x${hex64(i)}","0x${hex64(i * 7 + 1)}","0x${hex64(i * 13 + 2)}"],` +
      `"data":"0x${hex64(i * 31 + 3)}${hex64(i * 37 + 4)}","blockNumber":"0x${(0x1000000 + (i >> 4)).toString(16)}",` +
      `"transactionHash":"0x${hex64(i * 41 + 5)}","transactionIndex":"0x${(i % 16).toString(16)}",` +
      `"blockHash":"0x${hex64((i >> 4) + 6)}","logIndex":"0x${i.toString(16)}","removed":false}`;
    parts.push(log);
    size += log.length + 1;
  }
  const result = `[${parts.join(',')}]`;
  return { request, response: answer(1, result), result };
}

function hex40(n: number): string {
  return n.toString(16).padStart(40, '0');
}

function hex64(n: number): string {
  return n.toString(16).padStart(64, '0');
}
