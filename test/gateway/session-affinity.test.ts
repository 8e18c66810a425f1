/**
 * `origin_steering.policy: "hash"` is session affinity (SPEC §9): each client (here: one gateway API key
 * each) keeps one origin while it is healthy, and moves to another — always the same other — when it is
 * not; clients whose origin stays healthy do not move. Three real HTTP origins that answer their own name.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from '../helpers/app.js';
import { post, startHttpServer, type TestServer } from '../helpers/http.js';

const KEYS = Array.from({ length: 8 }, (_, i) => `client-key-${i}-0123456789abcdef`);

let origins: TestServer[];
let app: TestApp;

function origin(name: string): Promise<TestServer> {
  return startHttpServer((_req, res, body) => {
    const { id } = JSON.parse(body) as { id: unknown };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id, result: name }));
  });
}

/** Which origin answered web3_clientVersion for this key. */
async function servedBy(key: string): Promise<string> {
  const res = await post(app.rpcUrl(), '{"jsonrpc":"2.0","id":1,"method":"web3_clientVersion","params":[]}', {
    authorization: `Bearer ${key}`,
  });
  return res.json<{ result: string }>().result;
}

before(async () => {
  origins = await Promise.all(['o0', 'o1', 'o2'].map(origin));
  app = await startApp({
    gateway: { api_keys: KEYS, max_attempts: 3 },
    networks: { sepolia: { chain_id: 11155111, pools: ['sticky'] } },
    pools: [
      {
        name: 'sticky',
        origin_steering: { policy: 'hash' },
        origins: origins.map((server, i) => ({ name: `o${i}`, address: server.url })),
      },
    ],
  });
});

after(async () => {
  await app?.close();
  await Promise.all(origins?.map((server) => server.close()) ?? []);
});

describe('hash steering (session affinity)', () => {
  it('keeps every client on one origin while it is healthy, and moves only the clients of an origin that is not', async () => {
    const home = new Map<string, string>();
    for (const key of KEYS) {
      const first = await servedBy(key);
      for (let i = 0; i < 10; i += 1) assert.equal(await servedBy(key), first, `${key} stays on ${first}`);
      home.set(key, first);
    }
    const used = new Set(home.values());
    assert.ok(used.size >= 2, `clients spread over origins: ${[...used].join(', ')}`);

    // Take down the origin most clients use: its clients move (each to one other origin), the rest stay.
    const counts = [...used].map((name) => ({ name, n: [...home.values()].filter((v) => v === name).length }));
    const down = counts.sort((a, b) => b.n - a.n)[0]?.name as string;
    await origins[Number(down.slice(1))]?.close();
    for (const key of KEYS) {
      const now = await servedBy(key);
      if (home.get(key) === down) {
        assert.notEqual(now, down);
        for (let i = 0; i < 10; i += 1) assert.equal(await servedBy(key), now, `${key} stays on its new origin ${now}`);
      } else {
        assert.equal(now, home.get(key), `${key} kept ${home.get(key)}`);
      }
    }
  });
});
