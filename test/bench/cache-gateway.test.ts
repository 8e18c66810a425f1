import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { post, rpc } from '../helpers/http.js';
import { type FakeOrigin, startOrigin, waitFor } from './origin.js';

/**
 * The response cache inside the real gateway (startApp → main.ts → CachingForwarder): what reaches the
 * origin is counted by the origin itself; what the client gets back is compared byte for byte.
 */

const BLOCK_HASH = `0x${'cd'.repeat(32)}`;
let origin: FakeOrigin;
let app: TestApp;

before(async () => {
  origin = await startOrigin({
    eth_chainId: () => ({ result: '"0xaa36a7"' }),
    net_version: () => ({ result: '"11155111"' }),
    eth_blockNumber: () => ({ result: '"0x10"' }),
    eth_getBlockByHash: () => ({ error: '{"code":-32000,"message":"temporarily unavailable"}' }),
    eth_getTransactionReceipt: () => ({ result: 'null' }),
    eth_getBlockByNumber: (params) =>
      (params as unknown[])[0] === 'finalized'
        ? { result: `{"number":"0x64","hash":"${BLOCK_HASH}"}` }
        : { result: `{"number":"0x1","hash":"${BLOCK_HASH}"}` },
  });
  app = await startApp({
    networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
    pools: [poolOf('p', [origin.url])],
  });
});

after(async () => {
  await app?.close();
  await origin?.close();
});

test('N identical concurrent reads through the gateway make one upstream call; each client gets its own id', async () => {
  const ids = ['1', '"a-string"', 'null', '18446744073709551615', '123456789012345678901234567890', '-7', '0.5e3'];
  const before = origin.calls('eth_chainId');
  origin.hold();
  const pending = ids.map((id) =>
    post(app.rpcUrl(), `{"jsonrpc":"2.0","method":"eth_chainId","params":[],"id":${id}}`),
  );
  await waitFor(() => origin.calls('eth_chainId') > before, 'the upstream call');
  origin.release();
  const answers = await Promise.all(pending);
  assert.equal(origin.calls('eth_chainId') - before, 1);
  answers.forEach((answer, i) => {
    assert.equal(answer.status, 200);
    assert.equal(answer.text, `{"jsonrpc":"2.0","id":${ids[i]},"result":"0xaa36a7"}`);
  });
  // Later reads are answered from the cache.
  const later = await post(app.rpcUrl(), '{"jsonrpc":"2.0","id":99,"method":"eth_chainId"}');
  assert.equal(later.text, '{"jsonrpc":"2.0","id":99,"result":"0xaa36a7"}');
  assert.equal(origin.calls('eth_chainId') - before, 1);
});

test('moving reads, error answers and null results always reach the origin', async () => {
  for (const [method, params] of [
    ['eth_blockNumber', []],
    ['eth_getBlockByNumber', ['latest', false]],
    ['eth_getBlockByHash', [BLOCK_HASH, false]],
    ['eth_getTransactionReceipt', [BLOCK_HASH]],
  ] as const) {
    const before = origin.calls(method);
    const first = await rpc(app.rpcUrl(), method, [...params], 1);
    const second = await rpc(app.rpcUrl(), method, [...params], 2);
    assert.equal(first.status, 200, method);
    assert.equal(second.answer.id, 2);
    assert.equal(origin.calls(method) - before, 2, `${method} was not answered from the cache`);
  }
});

test('a batch mixes cached and forwarded calls, in order, byte for byte', async () => {
  await rpc(app.rpcUrl(), 'net_version', []); // warm the cache
  const before = origin.calls('net_version');
  const body =
    '[{"jsonrpc":"2.0","id":"x","method":"net_version"},{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber"},' +
    '{"jsonrpc":"2.0","method":"net_version"},{"jsonrpc":"2.0","id":3,"method":"net_version","params":[]}]';
  const res = await post(app.rpcUrl(), body);
  assert.equal(
    res.text,
    '[{"jsonrpc":"2.0","id":"x","result":"11155111"},{"jsonrpc":"2.0","id":2,"result":"0x10"},' +
      '{"jsonrpc":"2.0","id":3,"result":"11155111"}]',
  );
  // The notification went upstream (notifications are never answered from the cache); the others did not.
  assert.equal(origin.calls('net_version') - before, 1);
});

test('hits, misses and coalesced reads are counted in /metrics', async () => {
  const metricsUrl = `${new URL(app.apiUrl).origin}/metrics`;
  const text = await (await fetch(metricsUrl)).text();
  assert.match(text, /switchyard_gateway_cache_hits_total\{network="sepolia"\} [1-9]/);
  assert.match(text, /switchyard_gateway_cache_misses_total\{network="sepolia"\} [1-9]/);
  assert.match(text, /switchyard_gateway_cache_coalesced_total\{network="sepolia"\} [1-9]/);
});

test('cache_max_bytes 0 turns the cache off', async () => {
  const off = await startApp({
    gateway: { cache_max_bytes: 0 },
    networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
    pools: [poolOf('p', [origin.url])],
  });
  try {
    const before = origin.calls('eth_chainId');
    await rpc(off.rpcUrl(), 'eth_chainId', []);
    await rpc(off.rpcUrl(), 'eth_chainId', []);
    assert.equal(origin.calls('eth_chainId') - before, 2);
  } finally {
    await off.close();
  }
});

test('with a real anvil: finalized blocks by number are cached, blocks above finality and tags are not', async () => {
  let anvil: AnvilNode | undefined;
  let chain: TestApp | undefined;
  try {
    anvil = await startTestAnvil();
    chain = await startApp({
      networks: { sepolia: { chain_id: 11155111, pools: ['a'] } },
      pools: [poolOf('a', [anvil.url])],
    });
    // A block by number is kept only when the tracker's canonical window (the blocks it followed since
    // its start) holds it with that hash: block 0, final from the start (the first finality fetch).
    await waitFor(() => chain?.chain.canonicalHead('sepolia') !== undefined, 'the first head');
    await rpc(anvil.url, 'anvil_mine', ['0x64']); // latest 100
    const metricsUrl = `${new URL(chain.apiUrl).origin}/metrics`;
    const hits = async () => {
      const text = await (await fetch(metricsUrl)).text();
      return Number(/switchyard_gateway_cache_hits_total\{network="sepolia"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const direct = await post(
      anvil.url,
      '{"jsonrpc":"2.0","id":5,"method":"eth_getBlockByNumber","params":["0x0",true]}',
    );
    // Once finality is known, the block is kept and hit.
    await waitFor(async () => {
      await post(chain!.rpcUrl(), '{"jsonrpc":"2.0","id":5,"method":"eth_getBlockByNumber","params":["0x0",true]}');
      return (await hits()) > 0;
    }, 'a cache hit for block 0x0');
    const cached = await post(
      chain.rpcUrl(),
      '{"jsonrpc":"2.0","id":5,"method":"eth_getBlockByNumber","params":["0x0",true]}',
    );
    assert.equal(cached.text, direct.text, 'the cached block is the node’s answer byte for byte');

    const before = await hits();
    for (const tag of ['0x30', 'latest', 'finalized']) {
      await rpc(chain.rpcUrl(), 'eth_getBlockByNumber', [tag, false]);
      await rpc(chain.rpcUrl(), 'eth_getBlockByNumber', [tag, false]);
    }
    assert.equal(await hits(), before, 'block 0x30 (above the finalized block), latest and finalized are never hits');
  } finally {
    await chain?.close();
    await anvil?.stop();
  }
});
