/**
 * Read-your-writes (SPEC §9) keys on the client address of `gateway.trusted_proxies`: two INDEPENDENT
 * anvil nodes (a transaction exists only on the node that took it) behind one pool with random steering,
 * and every call comes through one "proxy" (this test connecting from 127.0.0.2, trusted). The client
 * that sent a transaction (named by X-Forwarded-For) reads its pending nonce from the node that took it,
 * every time; another client behind the same proxy is not pinned to that node (it meets the other node
 * too), and neither is an untrusted peer (127.0.0.1) that claims the writer's address.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { parseEther } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { rpc } from '../helpers/http.js';

const MNEMONIC = 'test test test test test test test test test test test junk';
const PROXY = '127.0.0.2';
const WRITER = '203.0.113.10';

let nodes: AnvilNode[];
let app: TestApp;

before(async () => {
  // Mining off: the transaction stays pending on the node that took it, so both nodes keep one head and
  // head-aware routing (SPEC §9) has no reason of its own to prefer either of them.
  nodes = await Promise.all([startTestAnvil({ noMining: true }), startTestAnvil({ noMining: true })]);
  app = await startApp({
    networks: { sepolia: { chain_id: 11155111, pools: ['pair'] } },
    pools: [
      poolOf(
        'pair',
        nodes.map((node) => node.url),
      ),
    ],
    gateway: { trusted_proxies: [PROXY] },
  });
});
after(async () => {
  await app?.close();
  await Promise.all((nodes ?? []).map((node) => node.stop()));
});

/** One JSON-RPC call from `localAddress` with these headers; the result. */
function call(localAddress: string, headers: Record<string, string>, method: string, params: unknown[]) {
  return new Promise<unknown>((resolve, reject) => {
    const req = http.request(app.rpcUrl(), {
      method: 'POST',
      localAddress,
      agent: false,
      headers: { 'content-type': 'application/json', ...headers },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve((JSON.parse(text) as { result?: unknown }).result));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
  });
}

describe('read-your-writes behind a trusted proxy', () => {
  it("pins the forwarded client's reads to the origin that took its transaction, and only that client's", async () => {
    const account = mnemonicToAccount(MNEMONIC, { addressIndex: 3 });
    const raw = await account.signTransaction({
      chainId: 11155111,
      type: 'eip1559',
      to: '0x000000000000000000000000000000000000bEEF',
      value: parseEther('0.01'),
      nonce: 0,
      gas: 21_000n,
      maxFeePerGas: 20_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
    const hash = await call(PROXY, { 'x-forwarded-for': WRITER }, 'eth_sendRawTransaction', [raw]);
    assert.match(String(hash), /^0x[0-9a-f]{64}$/);
    // Exactly one node took it (the nodes are independent chains); wait (bounded) until it shows.
    const deadline = Date.now() + 5000;
    for (;;) {
      const counts = await Promise.all(
        nodes.map(
          async (node) => (await rpc(node.url, 'eth_getTransactionCount', [account.address, 'pending'])).answer.result,
        ),
      );
      if (counts.filter((count) => count === '0x1').length === 1) break;
      assert.ok(Date.now() < deadline, `no single node took the transaction within 5 s: ${counts.join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }

    const pending = (from: string, headers: Record<string, string>) =>
      call(from, headers, 'eth_getTransactionCount', [account.address, 'pending']);
    // The writer, whatever it prepends itself, reads from the node that took its transaction every time.
    for (let i = 0; i < 10; i += 1) {
      assert.equal(await pending(PROXY, { 'x-forwarded-for': `198.51.100.${i}, ${WRITER}` }), '0x1');
    }
    // Another client of the same proxy is not pinned: random steering sends some of its reads to the
    // node without the transaction (p of 30 reads all on one node: 2^-30).
    const other: unknown[] = [];
    for (let i = 0; i < 30; i += 1) other.push(await pending(PROXY, { 'x-forwarded-for': '203.0.113.11' }));
    assert.ok(other.includes('0x0') && other.includes('0x1'), `another client's reads: ${other.join(' ')}`);
    // An untrusted peer claiming to be the writer is itself, not the writer.
    const spoofed: unknown[] = [];
    for (let i = 0; i < 30; i += 1) spoofed.push(await pending('127.0.0.1', { 'x-forwarded-for': WRITER }));
    assert.ok(spoofed.includes('0x0') && spoofed.includes('0x1'), `a spoofing peer's reads: ${spoofed.join(' ')}`);
  });
});
