/**
 * Log filters are bounded (SPEC §20), against a real anvil behind a counting node:http proxy:
 *   - a filter over `gateway.websocket.max_filter_addresses` (default 1000 addresses) or
 *     `max_filter_topics` (default 100 values in a position), or with more than 4 topic positions, is
 *     refused with -32602 naming the limit, for eth_getLogs and eth_newFilter over HTTP and WebSocket and
 *     for eth_subscribe("logs"); each refusal changes nothing (the origin is not asked, no filter or
 *     subscription exists, the connection's subscription slots are all still free); filters at the limits
 *     pass;
 *   - 100 identical logs subscriptions (over 4 connections, the filter written in different cases and
 *     orders) share one source: one upstream eth_getLogs per block, counted at the proxy, and every
 *     subscription gets every log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AnvilNode, type MinedReceipt, startTestAnvil, transactAt } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { fromChainTracker, post, rpc, send, startHttpServer, type TestServer } from '../helpers/http.js';
import { type RpcAnswerMessage as Answer, WsRpcClient as Client, type Json } from '../helpers/ws-client.js';

const TOPIC = `0x${'5e'.repeat(32)}`;
// Runtime: PUSH32 TOPIC, PUSH1 0, PUSH1 0, LOG1, STOP (39 bytes); init code copies it and returns it.
const BYTECODE = `0x6027600c60003960276000f37f${TOPIC.slice(2)}60006000a100`;

let node: AnvilNode;
let proxy: TestServer;
let app: TestApp;
let from: string;
let contract: string;

const addresses = (n: number) => Array.from({ length: n }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);
const topics = (n: number) => Array.from({ length: n }, (_, i) => `0x${(i + 1).toString(16).padStart(64, '0')}`);

/** Calls of `method` the gateway made at the origin (the chain tracker's polls left out). */
function upstream(method: string): Json[] {
  return proxy.received
    .filter((r) => !fromChainTracker(r.body))
    .flatMap((r) => {
      const parsed = JSON.parse(r.body) as Json | Json[];
      return Array.isArray(parsed) ? parsed : [parsed];
    })
    .filter((call) => call.method === method);
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function metric(series: string): Promise<number> {
  const res = await send(app.apiUrl.replace(/\/client\/v4$/, '/metrics'), { method: 'GET' });
  const line = res.text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

/** A transaction straight at the node (its own block); its receipt. */
function transact(to: string | undefined, data: string): Promise<MinedReceipt> {
  return transactAt(node.url, { from, to, data });
}

before(async () => {
  node = await startTestAnvil();
  proxy = await startHttpServer(async (_req, res, body) => {
    const answer = await post(node.url, body);
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(answer.text);
  });
  app = await startApp({
    networks: { sepolia: { chain_id: 11155111, pools: ['p'], head_poll_interval: '50ms' } },
    pools: [poolOf('p', [proxy.url])],
    gateway: { websocket: { max_subscriptions_per_connection: 25 } },
  });
  from = ((await rpc(node.url, 'eth_accounts')).answer.result as string[])[0] as string;
  contract = (await transact(undefined, BYTECODE)).contractAddress as string;
});
after(async () => {
  await app?.close();
  await proxy?.close();
  await node?.stop();
});

/** Filters just over each limit, with the limit each must name. */
const OVER: Array<[string, Json, RegExp]> = [
  [
    '1001 addresses',
    { address: addresses(1001) },
    /1001 addresses; at most 1000 .*gateway\.websocket\.max_filter_addresses/,
  ],
  [
    '101 topics in a position',
    { topics: [TOPIC, topics(101)] },
    /101 values; at most 100 .*gateway\.websocket\.max_filter_topics/,
  ],
  ['5 topic positions', { topics: [null, null, null, null, TOPIC] }, /5 positions; at most 4/],
];

describe('filters over the limits are refused and change nothing', () => {
  for (const [what, filter, limit] of OVER) {
    it(`${what}: eth_getLogs and eth_newFilter over HTTP and WebSocket, eth_subscribe logs`, async () => {
      const before = { logs: upstream('eth_getLogs').length, filters: upstream('eth_newFilter').length };
      const http = async (method: string) =>
        (await post(app.rpcUrl(), JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [filter] }))).json<Answer>();
      const client = await Client.open(app.rpcUrl().replace(/^http/, 'ws'));
      const answers: Array<[string, Answer]> = [
        ['HTTP eth_getLogs', await http('eth_getLogs')],
        ['HTTP eth_newFilter', await http('eth_newFilter')],
        ['WS eth_getLogs', await client.ask('eth_getLogs', [filter])],
        ['WS eth_newFilter', await client.ask('eth_newFilter', [filter])],
        ['WS eth_subscribe', await client.ask('eth_subscribe', ['logs', filter])],
      ];
      for (const [where, answer] of answers) {
        assert.equal(answer.error?.code, -32602, `${where}: ${JSON.stringify(answer)}`);
        assert.match(answer.error?.message ?? '', limit, where);
      }
      assert.deepEqual(
        { logs: upstream('eth_getLogs').length, filters: upstream('eth_newFilter').length },
        before,
        'the origin was not asked',
      );
      assert.equal(await metric('switchyard_gateway_ws_subscriptions{kind="logs"}'), 0, 'no subscription exists');
      // Every slot of the connection is still free.
      for (let i = 0; i < 25; i++) {
        const ok = await client.ask('eth_subscribe', ['logs', { address: contract }]);
        assert.equal(typeof ok.result, 'string', JSON.stringify(ok));
      }
      client.close();
      await until(async () => (await metric('switchyard_gateway_ws_subscriptions{kind="logs"}')) === 0, 'unsubscribed');
    });
  }

  it('filters at the limits pass (1000 addresses, 4 positions of 100 topics)', async () => {
    const filter = {
      fromBlock: '0x0',
      toBlock: 'latest',
      address: [...addresses(999), contract],
      topics: [topics(99).concat(TOPIC), topics(100), topics(100), topics(100)],
    };
    const logs = (
      await post(app.rpcUrl(), JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [filter] }))
    ).json<Answer>();
    assert.deepEqual(logs.result, []);
    const client = await Client.open(app.rpcUrl().replace(/^http/, 'ws'));
    const { fromBlock: _from, toBlock: _to, ...live } = filter;
    assert.equal(typeof (await client.ask('eth_subscribe', ['logs', live])).result, 'string');
    assert.equal(typeof (await client.ask('eth_newFilter', [filter])).result, 'string');
    client.close();
  });
});

describe('identical filters share one upstream query per block', () => {
  it('100 subscriptions over 4 connections: one eth_getLogs per block, every log to every subscription', async () => {
    const variants = [
      { address: contract, topics: [TOPIC] },
      { address: [contract.toUpperCase().replace('0X', '0x')], topics: [[TOPIC], null] },
    ];
    const clients = await Promise.all(
      Array.from({ length: 4 }, () => Client.open(app.rpcUrl().replace(/^http/, 'ws'))),
    );
    const ids: Array<[Client, string]> = [];
    for (const [c, client] of clients.entries()) {
      for (let i = 0; i < 25; i++) {
        const answer = await client.ask('eth_subscribe', ['logs', variants[(c + i) % 2]]);
        ids.push([client, answer.result as string]);
      }
    }
    assert.equal(await metric('switchyard_gateway_ws_subscriptions{kind="logs"}'), 100);
    const blocks: string[] = [];
    for (let i = 0; i < 3; i++) blocks.push((await transact(contract, '0x')).blockHash);
    await until(() => ids.every(([client, id]) => client.results(id).length === 3), 'every log everywhere');
    for (const [client, id] of ids) {
      assert.deepEqual(
        client.results(id).map((log) => log.blockHash),
        blocks,
      );
    }
    const asked = upstream('eth_getLogs').map((call) => (call.params as Array<{ blockHash?: string }>)[0]?.blockHash);
    for (const hash of blocks) assert.equal(asked.filter((h) => h === hash).length, 1, `eth_getLogs of ${hash}`);
    for (const client of clients) client.close();
  });
});
