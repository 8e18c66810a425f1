/**
 * eth_getLogs over wide ranges (SPEC §17 `networks.{name}.logs_split`), through a whole in-process
 * Switchyard in front of two "provider" proxies (test/helpers/provider-proxy.ts) of one real anvil. A
 * small contract emits a log per call (LOG2: a fixed topic and the block number, with as many data bytes
 * as the call asks), each call mined in its own block, with empty blocks between: a history of a few
 * hundred blocks with real logs, and a stretch of blocks with 24 KiB logs.
 *   - a range of hundreds of blocks is asked in chunks spread over both origins, and the answer is byte
 *     for byte the one anvil gives for the whole range (with `latest` too);
 *   - origins that refuse wide chunks (Infura's "query returned more than 10000 results", geth's
 *     "exceed maximum block range") get them halved until they answer: same bytes;
 *   - over WebSocket, the same bytes;
 *   - a merged answer past 1 MiB streams (chunked transfer), same bytes;
 *   - a blockHash filter is never split; without logs_split the refusal passes to the client, as before;
 *     with it, max_logs_block_range bounds the whole request at 1 000 000 blocks.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { type AnvilNode, startTestAnvil, transactAt } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { assemble, deployment } from '../helpers/evm-program.js';
import { post, type RpcAnswer, rpc } from '../helpers/http.js';
import { headsKnown, type ProviderProxy, startProviderProxy } from '../helpers/provider-proxy.js';
import { WsRpcClient } from '../helpers/ws-client.js';

const TOPIC = `0x${'4c'.repeat(32)}`;
/** LOG2(offset 0, size calldata[0..32], TOPIC, NUMBER): one log per call, its data as long as asked. */
const EMITTER = deployment(
  assemble(['NUMBER', 'PUSH32', TOPIC, 'PUSH1', 0, 'CALLDATALOAD', 'PUSH1', 0, 'LOG2', 'STOP']),
);
const CHUNK = 25;
const BIG_LOG_BYTES = 24 * 1024;

let node: AnvilNode;
let east: ProviderProxy;
let west: ProviderProxy;
let app: TestApp;
let from: string;
let contract: string;
/** The small logs' blocks, and the big logs' blocks. */
let history: { first: number; last: number };
let bigLogs: { first: number; last: number };

const size = (bytes: number) => `0x${bytes.toString(16).padStart(64, '0')}`;
const hex = (n: number) => `0x${n.toString(16)}`;

/** Blocks [from, to] an eth_getLogs body asks for (numbers only). */
function spanOf(body: string): number {
  const filter = (JSON.parse(body) as { params: [{ fromBlock: string; toBlock: string }] }).params[0];
  return Number(filter.toBlock) - Number(filter.fromBlock) + 1;
}

function logCalls(proxy: ProviderProxy): string[] {
  return proxy.requests.filter((r) => r.methods[0] === 'eth_getLogs').map((r) => r.body);
}

async function nodeHead(): Promise<number> {
  return Number((await rpc(node.url, 'eth_blockNumber')).answer.result);
}

/** Waits (bounded) until the gateway's network head is the node's. */
async function trackerAtNode(): Promise<number> {
  const head = await nodeHead();
  const deadline = Date.now() + 10_000;
  while (app.chain.networkHead('sepolia') !== head) {
    assert.ok(Date.now() < deadline, `the tracker did not reach block ${head}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return head;
}

/** The same request's bytes from the gateway and straight from anvil. */
async function both(filter: Record<string, unknown>, network = 'sepolia') {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 'logs-1', method: 'eth_getLogs', params: [filter] });
  const [through, direct] = await Promise.all([post(app.rpcUrl(network), body), post(node.url, body)]);
  return { through, direct };
}

before(async () => {
  node = await startTestAnvil();
  east = await startProviderProxy(node.url);
  west = await startProviderProxy(node.url, {}, 2);
  from = ((await rpc(node.url, 'eth_accounts')).answer.result as string[])[0] as string;
  contract = (await transactAt(node.url, { from, data: EMITTER })).contractAddress as string;
  history = { first: (await nodeHead()) + 1, last: 0 };
  for (let i = 0; i < 160; i += 1) {
    await transactAt(node.url, { from, to: contract, data: size(32 + (i % 5) * 32) });
    if (i % 2 === 1) await rpc(node.url, 'anvil_mine', ['0x1']);
  }
  history.last = await nodeHead();
  bigLogs = { first: history.last + 1, last: 0 };
  for (let i = 0; i < 48; i += 1) await transactAt(node.url, { from, to: contract, data: size(BIG_LOG_BYTES) });
  bigLogs.last = await nodeHead();
  app = await startApp({
    networks: {
      sepolia: {
        chain_id: 11_155_111,
        pools: ['providers'],
        head_poll_interval: '50ms',
        logs_split: { chunk: CHUNK, concurrency: 3 },
      },
      plain: { chain_id: 11_155_111, pools: ['providers'], head_poll_interval: '50ms' },
    },
    pools: [
      {
        name: 'providers',
        origins: [
          { name: 'east', address: east.url },
          { name: 'west', address: west.url },
        ],
      },
    ],
  });
  await headsKnown(app.chain, 'sepolia');
  await trackerAtNode();
});

after(async () => {
  await app?.close();
  await Promise.all([east?.close(), west?.close()]);
  await node?.stop();
});

beforeEach(() => {
  east.behaviour = {};
  west.behaviour = {};
  east.requests.length = 0;
  west.requests.length = 0;
});

describe('logs_split', () => {
  it('a range of hundreds of blocks is asked in chunks across both origins; the answer is byte for byte the whole-range one', async () => {
    const blocks = history.last + 1;
    const { through, direct } = await both({ fromBlock: '0x0', toBlock: hex(history.last), address: contract });
    assert.equal(through.status, 200);
    assert.equal((direct.json<RpcAnswer>().result as unknown[]).length, 160, 'the history holds 160 logs');
    assert.equal(through.text, direct.text);
    const calls = [...logCalls(east), ...logCalls(west)];
    assert.equal(calls.length, Math.ceil(blocks / CHUNK), 'one call per chunk');
    assert.ok(calls.every((body) => spanOf(body) <= CHUNK));
    assert.ok(logCalls(east).length > 0 && logCalls(west).length > 0, 'the chunks went to both origins');
  });

  it("every chunk call carries the client's request id to its origin", async () => {
    const filter = { fromBlock: '0x0', toBlock: hex(history.last), address: contract };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [filter] });
    const res = await post(app.rpcUrl(), body, { 'x-request-id': 'split-logs-1' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-request-id'], 'split-logs-1');
    const chunks = [...east.requests, ...west.requests].filter((r) => r.methods[0] === 'eth_getLogs');
    assert.ok(chunks.length > 1, 'the range went out in chunks');
    assert.deepEqual(new Set(chunks.map((r) => r.requestId)), new Set(['split-logs-1']));
  });

  it('`latest` and a left-out toBlock resolve to the network head', async () => {
    const head = await trackerAtNode();
    const tagged = await both({ fromBlock: hex(history.first), toBlock: 'latest', topics: [TOPIC] });
    assert.equal(tagged.through.text, tagged.direct.text);
    assert.ok((tagged.direct.json<RpcAnswer>().result as unknown[]).length > 160);
    const taggedCalls = [...logCalls(east), ...logCalls(west)];
    assert.equal(taggedCalls.length, Math.ceil((head - history.first + 1) / CHUNK), 'split up to the head');
    assert.ok(
      taggedCalls.every((body) => spanOf(body) <= CHUNK),
      'chunks ask block numbers',
    );
    east.requests.length = 0;
    west.requests.length = 0;
    const open = await both({ fromBlock: hex(head - 60) });
    assert.equal(open.through.text, open.direct.text);
    assert.equal(logCalls(east).length + logCalls(west).length, Math.ceil(61 / CHUNK), 'split up to the head');
  });

  it('chunks an origin refuses for size are halved until they are answered; the answer is the same bytes', async () => {
    east.behaviour = {
      refuse: {
        match: (method, params) => method === 'eth_getLogs' && spanOf(JSON.stringify({ params })) > 8,
        code: -32005,
        message: 'query returned more than 10000 results. Try with this block range [0x1, 0x8].',
      },
    };
    west.behaviour = {
      refuse: {
        match: (method, params) => method === 'eth_getLogs' && spanOf(JSON.stringify({ params })) > 12,
        code: -32602,
        message: 'exceed maximum block range 12',
      },
    };
    const { through, direct } = await both({ fromBlock: hex(history.first), toBlock: hex(history.last) });
    assert.equal(through.status, 200, through.text);
    assert.equal(through.text, direct.text);
    const refused = [...east.requests, ...west.requests].filter((r) => r.outcome === 'refused');
    assert.ok(refused.length > 0, 'some chunks were refused');
    const spans = new Set([...logCalls(east), ...logCalls(west)].map(spanOf));
    for (const span of [25, 13, 7]) assert.ok(spans.has(span), `a chunk of ${span} blocks was asked (halving)`);
  });

  it('eth_getLogs over WebSocket: the same bytes', async () => {
    const ws = await WsRpcClient.open(app.rpcUrl().replace(/^http/, 'ws'));
    try {
      const filter = { fromBlock: '0x0', toBlock: hex(history.last), address: contract };
      const answer = await ws.ask('eth_getLogs', [filter]);
      assert.equal(answer.error, undefined);
      const direct = await post(
        node.url,
        JSON.stringify({ jsonrpc: '2.0', id: answer.id, method: 'eth_getLogs', params: [filter] }),
      );
      assert.equal(ws.texts.at(-1), direct.text);
      assert.ok(logCalls(east).length + logCalls(west).length > 1, 'split in chunks');
    } finally {
      ws.close();
    }
  });

  it('a merged answer past 1 MiB streams, and is the same bytes', async () => {
    const filter = { fromBlock: hex(bigLogs.first), toBlock: hex(bigLogs.last) };
    const { through, direct } = await both(filter);
    assert.ok(direct.text.length > 2 * 1_048_576, `the big logs weigh ${direct.text.length} bytes`);
    assert.equal(through.headers['transfer-encoding'], 'chunked', 'streamed');
    assert.equal(through.headers['content-length'], undefined);
    assert.equal(through.text, direct.text);
    assert.equal(logCalls(east).length + logCalls(west).length, Math.ceil((bigLogs.last - bigLogs.first + 1) / CHUNK));
    const small = await both({ fromBlock: hex(history.first), toBlock: hex(history.first + 60) });
    assert.ok(small.through.headers['content-length'] !== undefined, 'a small merged answer goes whole');
  });

  it('a chunk answered with another error ends the call with it; once streaming, the connection is cut', async () => {
    const broken = (block: number) => ({
      match: (method: string, params: unknown) => {
        if (method !== 'eth_getLogs') return false;
        const filter = (params as [{ fromBlock: string; toBlock: string }])[0];
        return Number(filter.fromBlock) <= block && block <= Number(filter.toBlock);
      },
      code: -32000,
      message: 'the backend went sideways',
    });
    east.behaviour = { refuse: broken(history.first + 30) };
    west.behaviour = { refuse: broken(history.first + 30) };
    const { through } = await both({ fromBlock: hex(history.first), toBlock: hex(history.first + 80) });
    assert.equal(through.status, 200);
    assert.deepEqual(through.json<RpcAnswer>().error, { code: -32000, message: 'the backend went sideways' });
    east.behaviour = { refuse: broken(bigLogs.last) };
    west.behaviour = { refuse: broken(bigLogs.last) };
    await assert.rejects(both({ fromBlock: hex(bigLogs.first), toBlock: hex(bigLogs.last) }), 'the stream is cut');
  });

  it('a wide eth_getLogs in a batch leaves the upstream batch and is split like a single call', async () => {
    const filter = { fromBlock: '0x0', toBlock: hex(history.last), address: contract };
    const batch = JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', id: 2, method: 'eth_getLogs', params: [filter] },
      { jsonrpc: '2.0', id: 3, method: 'eth_getBlockByNumber', params: ['0x1', false] },
    ]);
    const [through, direct] = await Promise.all([post(app.rpcUrl(), batch), post(node.url, batch)]);
    assert.equal(through.status, 200);
    assert.deepEqual(through.json(), direct.json());
    const single = await post(
      node.url,
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_getLogs', params: [filter] }),
    );
    assert.ok(through.text.includes(single.text), 'the logs element is byte for byte the single answer');
    assert.equal(logCalls(east).length + logCalls(west).length, Math.ceil((history.last + 1) / CHUNK));
  });

  it('a blockHash filter is never split', async () => {
    const block = (await rpc(node.url, 'eth_getBlockByNumber', [hex(history.first), false])).answer.result as {
      hash: string;
    };
    const { through, direct } = await both({ blockHash: block.hash });
    assert.equal(through.text, direct.text);
    assert.equal(logCalls(east).length + logCalls(west).length, 1);
  });

  it('without logs_split the refusal passes to the client; with it, max_logs_block_range bounds the whole request', async () => {
    const refuse = {
      match: (m: string) => m === 'eth_getLogs',
      code: -32005,
      message: 'query returned more than 10000 results',
    };
    east.behaviour = { refuse };
    west.behaviour = { refuse };
    const plain = await both({ fromBlock: hex(history.first), toBlock: hex(history.first + 40) }, 'plain');
    assert.deepEqual(plain.through.json<RpcAnswer>().error, { code: -32005, message: refuse.message });
    const wide = await both({ fromBlock: '0x0', toBlock: hex(1_000_000) });
    const error = wide.through.json<RpcAnswer>().error;
    assert.equal(error?.code, -32005);
    assert.match(error?.message ?? '', /at most 1000000/);
  });
});
