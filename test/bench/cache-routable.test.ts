import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ApiFixture, startApiFixture } from '../api/setup.js';
import { post } from '../helpers/http.js';
import { type FakeOrigin, startOrigin } from './origin.js';

/**
 * A cached answer is served only while the network has a routable pool (SPEC §2's table): with every
 * pool of the network disabled, even eth_chainId — cached — gets 503 -32002 "no healthy origin", and
 * once a pool is enabled again it is answered from the cache with no upstream call.
 */

let origin: FakeOrigin;
let f: ApiFixture;

before(async () => {
  origin = await startOrigin({ eth_chainId: () => ({ result: '"0xaa36a7"' }) });
  f = await startApiFixture({ networks: { sepolia: { chain_id: 11155111, pools: ['dyn'] } } });
});

after(async () => {
  await f?.close();
  await origin?.close();
});

test('a cached eth_chainId answers 503 while every pool of the network is disabled, and from cache again after', async () => {
  const url = f.app.rpcUrl('sepolia');
  const chainId = (id: number) => post(url, `{"jsonrpc":"2.0","id":${id},"method":"eth_chainId","params":[]}`);
  const pool = await f.sdk.loadBalancers.pools.create({
    account_id: f.accountId,
    name: 'dyn',
    origins: [{ name: 'local', address: origin.url }],
  });
  const warm = await chainId(1);
  assert.equal(warm.status, 200);
  assert.equal(origin.calls('eth_chainId'), 1);
  assert.equal((await chainId(2)).text, '{"jsonrpc":"2.0","id":2,"result":"0xaa36a7"}');
  assert.equal(origin.calls('eth_chainId'), 1, 'the second read came from the cache');

  await f.sdk.loadBalancers.pools.edit(pool.id as string, { account_id: f.accountId, enabled: false });
  const refused = await chainId(3);
  assert.equal(refused.status, 503);
  const body = JSON.parse(refused.text) as { id: number; error: { code: number; data: { network: string } } };
  assert.equal(body.id, 3);
  assert.equal(body.error.code, -32002);
  assert.equal(body.error.data.network, 'sepolia');
  // In a batch the cached call is refused in its slot too.
  const batch = await post(url, '[{"jsonrpc":"2.0","id":4,"method":"eth_chainId"}]');
  assert.equal(batch.status, 503);
  assert.equal((JSON.parse(batch.text) as Array<{ error: { code: number } }>)[0]?.error.code, -32002);

  await f.sdk.loadBalancers.pools.edit(pool.id as string, { account_id: f.accountId, enabled: true });
  assert.equal((await chainId(5)).text, '{"jsonrpc":"2.0","id":5,"result":"0xaa36a7"}');
  assert.equal(origin.calls('eth_chainId'), 1, 'served from the cache again, no upstream call');
});
