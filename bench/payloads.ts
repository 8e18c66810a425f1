/**
 * The requests the load generator sends and the fixed answers the upstream serves. Each upstream body
 * carries the same id as its request, so a proxy that passes bytes through (and splices the client's id
 * back) returns the upstream body byte for byte: the harness checks exactly that before every leg.
 */

export interface Exchange {
  /** What the client POSTs. */
  request: string;
  /** What the upstream answers, and so what the client must get back. */
  response: string;
}

const BLOCK_NUMBER = '0x13a5e7f';

/** A single uncacheable read: eth_blockNumber changes with every block. */
export const single: Exchange = {
  request: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
  response: `{"jsonrpc":"2.0","id":1,"result":"${BLOCK_NUMBER}"}`,
};

/** A read the gateway may answer from its cache: the chain id never changes. */
export const cacheable: Exchange = {
  request: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
  response: '{"jsonrpc":"2.0","id":1,"result":"0xaa36a7"}',
};

/** A batch of 100 uncacheable reads, ids 1..100. */
export function batch(size = 100): Exchange {
  const requests: string[] = [];
  const responses: string[] = [];
  for (let id = 1; id <= size; id++) {
    requests.push(`{"jsonrpc":"2.0","id":${id},"method":"eth_getBalance","params":["0x${hex40(id)}","latest"]}`);
    responses.push(`{"jsonrpc":"2.0","id":${id},"result":"0x${(id * 1_000_003).toString(16)}"}`);
  }
  return { request: `[${requests.join(',')}]`, response: `[${responses.join(',')}]` };
}

/**
 * An eth_getLogs answer of at least `bytes` bytes (10 MiB by default): realistic log objects, generated
 * deterministically so every run serves the same bytes.
 */
export function largeLogs(bytes = 10 * 1_048_576): Exchange {
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
  return { request, response: `{"jsonrpc":"2.0","id":1,"result":[${parts.join(',')}]}` };
}

function hex40(n: number): string {
  return n.toString(16).padStart(40, '0');
}

function hex64(n: number): string {
  return n.toString(16).padStart(64, '0');
}
