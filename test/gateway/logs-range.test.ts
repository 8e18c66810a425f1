/**
 * The eth_getLogs range guard through the gateway (SPEC §9): a range wider than
 * networks.{name}.max_logs_block_range is answered HTTP 200 with -32005 naming the limit and how to split,
 * before any upstream call; a range at the limit reaches the origin; eth_newFilter is guarded the same; a
 * batch refuses only the wide element; `null` turns the guard off. A real anvil origin.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { post, type RpcAnswer, rpc } from '../helpers/http.js';

let node: AnvilNode;
let app: TestApp;

before(async () => {
  node = await startTestAnvil();
  app = await startApp({
    networks: {
      sepolia: { chain_id: 11155111, pools: ['one'], max_logs_block_range: 100 },
      open: { chain_id: 11155111, pools: ['one'], max_logs_block_range: null },
    },
    pools: [poolOf('one', [node.url])],
  });
});

after(async () => {
  await app?.close();
  await node?.stop();
});

describe('eth_getLogs range guard', () => {
  it('lets a range of exactly the limit reach the origin', async () => {
    const res = await rpc(app.rpcUrl(), 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x63' }]);
    assert.equal(res.status, 200);
    assert.deepEqual(res.answer.result, []);
  });

  it('answers a wider range with -32005 naming the limit and a split, for eth_getLogs and eth_newFilter', async () => {
    for (const method of ['eth_getLogs', 'eth_newFilter']) {
      const res = await rpc(app.rpcUrl(), method, [{ fromBlock: '0x0', toBlock: '0x64' }], 7);
      assert.equal(res.status, 200);
      assert.equal(res.answer.id, 7);
      assert.equal(res.answer.error?.code, -32005);
      assert.match(res.answer.error?.message ?? '', /spans 101 blocks; sepolia allows at most 100/);
      assert.match(res.answer.error?.message ?? '', /fromBlock 0x0 toBlock 0x63, then fromBlock 0x64/);
    }
  });

  it('refuses only the wide element of a batch', async () => {
    const body = JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [{ fromBlock: '0x0', toBlock: '0x1' }] },
      { jsonrpc: '2.0', id: 2, method: 'eth_getLogs', params: [{ fromBlock: '0x0', toBlock: '0x1000' }] },
      { jsonrpc: '2.0', id: 3, method: 'eth_chainId', params: [] },
    ]);
    const answers = (await post(app.rpcUrl(), body)).json<RpcAnswer[]>();
    assert.deepEqual(answers[0]?.result, []);
    assert.equal(answers[1]?.error?.code, -32005);
    assert.equal(answers[2]?.result, '0xaa36a7');
  });

  it('counts a range whose toBlock is a tag up to the network head, and is off with null', async () => {
    await rpc(node.url, 'anvil_mine', ['0x70']);
    const deadline = Date.now() + 5000;
    // The tracker learns the head; then fromBlock 0x0 to latest spans more than 100 blocks.
    for (;;) {
      const res = await rpc(app.rpcUrl(), 'eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]);
      if (res.answer.error?.code === -32005) break;
      assert.ok(Date.now() < deadline, `never refused: ${JSON.stringify(res.answer)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const open = await rpc(app.rpcUrl('open'), 'eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x1000' }]);
    assert.deepEqual(open.answer.result, []);
  });
});
