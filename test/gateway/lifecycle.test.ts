/**
 * Network lifecycle through the whole gateway, on an injected clock: a network with `retired_on` is
 * served with Deprecation/Sunset/Link headers until the last millisecond before 00:00 UTC of that date,
 * and answers 410 / -32001 from that instant on; the replacement serves the same request unchanged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { scanJson } from '../../src/gateway/rpc/json-scan.js';
import { poolOf, startApp, type TestApp } from '../helpers/app.js';
import { post, type RpcAnswer, startHttpServer, type TestServer } from '../helpers/http.js';

const req = (method: string, params: unknown[] = [], id: unknown = 1): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

async function expectError(res: Awaited<ReturnType<typeof post>>, status: number, code: number) {
  assert.equal(res.status, status, res.text);
  const error = res.json<RpcAnswer>().error;
  assert.equal(error?.code, code, res.text);
  return error as NonNullable<RpcAnswer['error']>;
}

function rawId(text: string): string {
  const buf = Buffer.from(text);
  const id = scanJson(buf)?.members.find((m) => m.key === 'id');
  assert.ok(id, `no id in ${text}`);
  return buf.subarray(id.value.start, id.value.end).toString();
}

describe('network lifecycle (injected clock)', () => {
  let clock: ManualClock;
  let dated: TestApp;
  let origin: TestServer;

  before(async () => {
    origin = await startHttpServer((_req, res, body) => {
      const { id } = JSON.parse(body) as { id: unknown };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0xaa36a7' }));
    });
    clock = new ManualClock('2023-01-29T23:59:59.000Z');
    dated = await startApp(
      {
        networks: {
          sepolia: { chain_id: 11155111, pools: ['main'] },
          rinkeby: { chain_id: 11155111, pools: ['main'], retired_on: '2023-01-30', replacement: 'sepolia' },
        },
        pools: [poolOf('main', [origin.url])],
      },
      { clock },
    );
  });
  after(async () => {
    await dated?.close();
    await origin?.close();
  });

  it('before the date: served, with Deprecation, Sunset and Link headers', async () => {
    const res = await post(dated.rpcUrl('rinkeby'), req('eth_chainId'));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json<RpcAnswer>().result, '0xaa36a7');
    assert.equal(res.headers.deprecation, `@${Date.parse('2023-01-30T00:00:00Z') / 1000}`);
    assert.equal(res.headers.sunset, 'Mon, 30 Jan 2023 00:00:00 GMT');
    assert.equal(res.headers.link, '</v1/sepolia>; rel="successor-version"');
    const plain = await post(dated.rpcUrl('sepolia'), req('eth_chainId'));
    assert.equal(plain.headers.deprecation, undefined);
    assert.equal(plain.headers.sunset, undefined);
  });

  it('from the date (00:00 UTC) on: 410 / -32001 naming the date and the replacement path', async () => {
    clock.set('2023-01-30T00:00:00.000Z');
    const res = await post(dated.rpcUrl('rinkeby'), req('eth_chainId', [], 'keep-me'));
    const error = await expectError(res, 410, -32001);
    assert.equal(rawId(res.text), '"keep-me"');
    const request_id = res.headers['x-request-id'];
    assert.deepEqual(error.data, { retired_on: '2023-01-30', replacement: 'sepolia', request_id });
    assert.equal(
      error.message,
      'Network rinkeby was retired on 2023-01-30; send the same request to /v1/sepolia instead (only the last path segment changes).',
    );
    const batch = await post(dated.rpcUrl('rinkeby'), `[${req('eth_chainId')}]`);
    await expectError(batch, 410, -32001);
    // Every request, whatever its body: unreadable, empty batch, invalid request.
    for (const body of ['{"jsonrpc":', '[]', '{"jsonrpc":"1.0","method":"eth_chainId","id":1}']) {
      await expectError(await post(dated.rpcUrl('rinkeby'), body), 410, -32001);
    }
  });

  it('the migration changes only the last path segment', async () => {
    const body = '{"jsonrpc":"2.0","method":"eth_getBlockByNumber","params":["0x0",false],"id":18446744073709551615}';
    const res = await post(dated.rpcUrl('sepolia'), body);
    assert.equal(res.status, 200);
    assert.equal(rawId(res.text), '18446744073709551615');
    const retired = await post(dated.rpcUrl('rinkeby'), body);
    assert.equal(retired.status, 410);
    assert.equal(rawId(retired.text), '18446744073709551615');
  });
});
