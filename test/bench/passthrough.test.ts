import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { largeLogs } from '../../bench/payloads.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { post } from '../helpers/http.js';
import { type FakeOrigin, startOrigin } from './origin.js';

/**
 * Big answers and full batches through the real gateway, compared byte for byte with what the origin
 * sent (only the id differs: the client's own comes back).
 */

const LARGE = largeLogs(10 * 1_048_576);
let origin: FakeOrigin;
let app: TestApp;

before(async () => {
  origin = await startOrigin({
    eth_getLogs: () => ({ result: LARGE.result }),
    eth_chainId: () => ({ result: '"0xaa36a7"' }),
    eth_getBalance: (params) => ({ result: `"0x${BigInt((params as string[])[0] ?? '0').toString(16)}"` }),
  });
  app = await startApp({
    gateway: { max_batch: 100 },
    networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
    pools: [poolOf('p', [origin.url])],
  });
});

after(async () => {
  await app?.close();
  await origin?.close();
});

test('a 10 MiB eth_getLogs answer comes back byte for byte with the client id', async () => {
  assert.ok(LARGE.result.length >= 10 * 1_048_576);
  for (const id of ['1', '"a-string-id"', '123456789012345678901234567890']) {
    const request = LARGE.request.replace('"id":1', `"id":${id}`);
    const res = await post(app.rpcUrl(), request);
    assert.equal(res.status, 200);
    const expected = `{"jsonrpc":"2.0","id":${id},"result":${LARGE.result}}`;
    assert.equal(res.text.length, expected.length, `length for id ${id}`);
    assert.ok(res.text === expected, `bytes differ for id ${id}`);
  }
});

test('a batch of 100 comes back in order, byte for byte, with notifications left out', async () => {
  const requests: string[] = [];
  const expected: string[] = [];
  for (let i = 1; i <= 100; i++) {
    const address = `0x${i.toString(16).padStart(40, '0')}`;
    if (i % 10 === 0) {
      requests.push(`{"jsonrpc":"2.0","method":"eth_getBalance","params":["${address}","latest"]}`); // notification
    } else if (i % 7 === 0) {
      requests.push(`{"jsonrpc":"2.0","id":"c${i}","method":"eth_chainId"}`); // answered from the cache after the first
      expected.push(`{"jsonrpc":"2.0","id":"c${i}","result":"0xaa36a7"}`);
    } else {
      requests.push(`{"jsonrpc":"2.0","id":${i},"method":"eth_getBalance","params":["${address}","latest"]}`);
      expected.push(`{"jsonrpc":"2.0","id":${i},"result":"0x${i.toString(16)}"}`);
    }
  }
  const res = await post(app.rpcUrl(), `[${requests.join(',')}]`);
  assert.equal(res.status, 200);
  assert.equal(res.text, `[${expected.join(',')}]`);
});
