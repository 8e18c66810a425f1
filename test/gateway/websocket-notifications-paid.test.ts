/**
 * Subscription notifications are paid for (SPEC §20): each notification sent to a gateway key's
 * WebSocket counts as one call toward its daily quota, its rate limit and its usage. Real anvil origin
 * (blocks mined with evm_mine straight at the node), real `ws` client, gateway keys made through the API
 * (both store backends), an injected ManualClock for the UTC day:
 *   - a key with daily_quota 6: two subscriptions (2 calls), four head notifications (4 calls), then the
 *     next notification does not fit: both subscriptions end with the error notification
 *     `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":ID,"error":{"code":-32005,
 *     "message":…}}}` and are gone (nothing more comes, the gauge drops), the connection stays; the
 *     key's usage shows the 6 calls;
 *   - a key with a rate limit of burst 5: the handshake, the subscription and three notifications spend
 *     the five tokens, so the key's next call gets -32005; the next head is still delivered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { ManualClock } from '../../src/clock.js';
import { type ApiFixture, startApiFixture } from '../api/setup.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf } from '../helpers/app.js';
import { rpc, send } from '../helpers/http.js';
import { type Json, WsRpcClient } from '../helpers/ws-client.js';

let node: AnvilNode;
let f: ApiFixture;
let keys: string;
const clock = new ManualClock('2026-05-10T10:00:00Z');

before(async () => {
  node = await startTestAnvil();
  f = await startApiFixture(
    {
      networks: { sepolia: { chain_id: 11155111, pools: ['p'], head_poll_interval: '50ms' } },
      pools: [poolOf('p', [node.url])],
    },
    { clock },
  );
  keys = `/accounts/${f.accountId}/gateway/keys`;
});
after(async () => {
  await f?.close();
  await node?.stop();
});

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function createKey(body: Json): Promise<{ id: string; value: string }> {
  const res = await f.call('POST', keys, { body });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result as { id: string; value: string };
}

async function nodeHead(): Promise<number> {
  return Number((await rpc(node.url, 'eth_blockNumber')).answer.result);
}

/** Mines one block at the node and waits until the gateway's chain tracker has it. */
async function mine(): Promise<void> {
  await rpc(node.url, 'evm_mine');
  const head = await nodeHead();
  await until(() => (f.app.chain.canonicalHead('sepolia')?.number ?? 0) >= head, `the tracker at block ${head}`);
}

async function logsGauge(kind: string): Promise<number> {
  const res = await send(f.app.apiUrl.replace(/\/client\/v4$/, '/metrics'), { method: 'GET' });
  const series = `switchyard_gateway_ws_subscriptions{kind="${kind}"} `;
  const line = res.text.split('\n').find((l) => l.startsWith(series));
  return line === undefined ? 0 : Number(line.slice(series.length));
}

/** A client of the key's WebSocket. */
function open(key: string): Promise<WsRpcClient> {
  return WsRpcClient.open(`${f.app.rpcUrl().replace(/^http/, 'ws')}?key=${key}`);
}

describe('notifications are charged to the key', () => {
  it('a key out of daily quota through notifications gets its subscriptions closed with the error notification', async () => {
    const key = await createKey({ name: 'quota', daily_quota: 6 });
    await until(
      async () => (f.app.chain.canonicalHead('sepolia')?.number ?? -1) === (await nodeHead()),
      'tracker at head',
    );
    const client = await open(key.value);
    const heads = await client.result<string>('eth_subscribe', ['newHeads']);
    const logs = await client.result<string>('eth_subscribe', ['logs', { address: `0x${'ab'.repeat(20)}` }]);
    for (let i = 1; i <= 4; i++) {
      await mine();
      await until(() => client.notifications(heads).length === i, `head notification ${i}`);
    }
    await mine(); // its head notification is the 7th call: it does not fit
    await until(
      () => client.notifications(logs).length === 1 && client.notifications(heads).length === 5,
      'the error notifications',
    );
    const last = (id: string) => {
      const text = client.texts.find((t) => t.includes(`"subscription":"${id}","error"`));
      assert.ok(text, `the last notification of ${id}`);
      const parsed = JSON.parse(text) as Json;
      assert.deepEqual(Object.keys(parsed), ['jsonrpc', 'method', 'params']);
      const params = parsed.params as { subscription: string; error: { code: number; message: string } };
      assert.deepEqual(
        [parsed.jsonrpc, parsed.method, Object.keys(params)],
        ['2.0', 'eth_subscription', ['subscription', 'error']],
      );
      assert.deepEqual(Object.keys(params.error), ['code', 'message']);
      assert.equal(params.error.code, -32005);
      assert.match(params.error.message, /daily quota of 6 calls is used up/);
    };
    last(heads);
    last(logs);
    assert.equal(client.results(heads).length, 4, 'four heads before the error');
    // Gone: the gauges drop, more blocks bring nothing, the connection stays (its calls are refused by quota).
    await until(async () => (await logsGauge('newHeads')) === 0 && (await logsGauge('logs')) === 0, 'gauges at 0');
    await mine();
    await mine();
    assert.equal(client.notifications(heads).length, 5);
    assert.equal(client.ws.readyState, WebSocket.OPEN);
    const refused = (await client.ask('eth_chainId')).error as { code: number };
    assert.equal(refused.code, -32005);
    // The usage shows the two subscriptions and the four notifications.
    await until(async () => {
      const usage = (await f.call('GET', `${keys}/${key.id}/usage`)).body.result as Array<{ requests: number }>;
      return usage.reduce((sum, day) => sum + day.requests, 0) === 6;
    }, 'usage of 6 calls');
    client.close();
  });

  it("notifications spend the key's rate-limit tokens, and are delivered when none are left", async () => {
    const key = await createKey({ name: 'rate', rate_limit: { requests_per_second: 0.001, burst: 5 } });
    await until(
      async () => (f.app.chain.canonicalHead('sepolia')?.number ?? -1) === (await nodeHead()),
      'tracker at head',
    );
    const client = await open(key.value); // 1 token
    const heads = await client.result<string>('eth_subscribe', ['newHeads']); // 2
    for (let i = 1; i <= 3; i++) {
      await mine();
      await until(() => client.notifications(heads).length === i, `head notification ${i}`); // 3, 4, 5
    }
    const limited = (await client.ask('eth_chainId')).error as { code: number; message: string };
    assert.equal(limited.code, -32005);
    assert.match(limited.message, /Rate limit/);
    await mine();
    await until(() => client.notifications(heads).length === 4, 'the next head, tokens or not');
    client.close();
  });
});
