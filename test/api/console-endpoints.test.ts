// The API endpoints the operator console reads (SPEC §13): the token's accounts through the official
// SDK (`client.accounts.list()`), the health events timeline, the delivery queue with the retry of a
// dead-lettered delivery, and per-origin statistics counted by the gateway against a real anvil and
// summed with another instance's counts in the store.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Cloudflare from 'cloudflare';
import { insertHealthEvent } from '../../src/health/events.js';
import { LATENCY_BUCKETS } from '../../src/model/origin-stats.js';
import { addStats } from '../../src/stats/stats-queries.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { poolOf } from '../helpers/app.js';
import { waitFor } from '../helpers/devnet-chain.js';
import { type ApiFixture, OTHER_ACCOUNT, startApiFixture } from './setup.js';

interface OriginStats {
  pool_name: string;
  origin_name: string;
  healthy: boolean;
  head: number | null;
  lag: number | null;
  earliest_block: number | null;
  requests: number;
  errors: number;
  requests_per_second: number;
  error_rate: number;
  p50_ms: number | null;
  series?: Array<{ minute: string; requests: number; errors: number; p50_ms: number | null }>;
}

describe('console endpoints', () => {
  let f: ApiFixture;
  let anvil: AnvilNode;
  let account = '';

  before(async () => {
    anvil = await startTestAnvil();
    f = await startApiFixture({
      networks: { sepolia: { chain_id: 31337, pools: ['main'] } },
      pools: [poolOf('main', [anvil.url])],
    });
    account = f.accountId;
  });
  after(async () => {
    await f?.close();
    await anvil?.stop();
  });

  test('GET /accounts through the SDK lists the token’s own account, for read and write tokens', async () => {
    const list = async (sdk: Cloudflare) => {
      const out = [];
      for await (const item of sdk.accounts.list()) out.push(item);
      return out;
    };
    const mine = await list(f.sdk);
    assert.deepEqual(
      mine.map((a) => [a.id, a.type]),
      [[account, 'standard']],
    );
    assert.equal(typeof mine[0]?.name, 'string');
    const viaRead = await list(new Cloudflare({ apiToken: f.readToken, baseURL: f.app.apiUrl, maxRetries: 0 }));
    assert.deepEqual(
      viaRead.map((a) => a.id),
      [account],
    );
    const other = await list(new Cloudflare({ apiToken: f.otherToken, baseURL: f.app.apiUrl, maxRetries: 0 }));
    assert.deepEqual(
      other.map((a) => a.id),
      [OTHER_ACCOUNT],
    );
    const bad = await f.call('GET', '/accounts', { token: 'x'.repeat(40) });
    assert.equal(bad.status, 401);
    const past = await f.call('GET', '/accounts?page=2');
    assert.deepEqual(past.body.result, []);
  });

  test('health events: newest first, pool filter, since, other accounts invisible', async () => {
    const event = (accountId: string, pool: string, at: string, health: 'Healthy' | 'Unhealthy') =>
      insertHealthEvent(f.app.store.db, {
        id: randomUUID(),
        account_id: accountId,
        event_source: 'origin',
        pool_id: pool,
        pool_name: `name-${pool}`,
        origin_name: 'o0',
        origin_address: 'http://secret.example/key123',
        previous: health === 'Healthy' ? 'Unhealthy' : 'Healthy',
        new_health: health,
        reason: health === 'Healthy' ? '' : 'connection refused',
        occurred_at: at,
      });
    await event(account, 'p1', '2031-01-01T00:00:00.000Z', 'Unhealthy');
    await event(account, 'p2', '2031-01-01T00:01:00.000Z', 'Unhealthy');
    await event(account, 'p1', '2031-01-01T00:02:00.000Z', 'Healthy');
    await event(OTHER_ACCOUNT, 'p9', '2031-01-01T00:03:00.000Z', 'Unhealthy');
    const path = `/accounts/${account}/load_balancers/health_events`;
    const all = await f.call('GET', path, { token: f.readToken });
    assert.equal(all.status, 200);
    const items = all.body.result as Array<Record<string, unknown>>;
    const mine = items.filter((item) => ['p1', 'p2'].includes(item.pool_id as string));
    assert.deepEqual(
      mine.map((item) => [item.pool_id, item.new_health, item.reason]),
      [
        ['p1', 'Healthy', ''],
        ['p2', 'Unhealthy', 'connection refused'],
        ['p1', 'Unhealthy', 'connection refused'],
      ],
    );
    assert.ok(!items.some((item) => item.pool_id === 'p9'));
    assert.ok(!JSON.stringify(all.body).includes('key123'), 'origin addresses are not returned');
    const p1 = await f.call('GET', `${path}?pool_id=p1&since=2031-01-01T00:01:00Z`);
    assert.deepEqual(
      (p1.body.result as Array<Record<string, unknown>>).map((item) => item.new_health),
      ['Healthy'],
    );
    assert.equal((await f.call('GET', `${path}?since=yesterday`)).status, 400);
    assert.equal((await f.call('GET', `/accounts/${OTHER_ACCOUNT}/load_balancers/health_events`)).status, 403);
  });

  test('delivery queue: pending, failing with its error and next attempt, dead; retry needs write', async () => {
    const db = f.app.store.db;
    const delivery = (status: 'pending' | 'dead' | 'sent', attempts: number, error: string | null) => {
      const id = randomUUID();
      return db
        .insertInto('notification_deliveries')
        .values({
          id,
          account_id: account,
          kind: 'policy_alert',
          dedupe_key: id,
          event_id: null,
          policy_id: null,
          mechanism_type: 'webhook',
          mechanism: 'dest-1',
          message_id: `msg_${id}`,
          status,
          attempts,
          next_attempt_at: '2031-01-01T00:10:00.000Z',
          locked_until: null,
          locked_by: null,
          last_error: error,
          payload: JSON.stringify({
            name: 'Pool main',
            description: '',
            alert_type: 'load_balancing_health_alert',
            text: 't',
          }),
          created_at: `2031-01-01T00:0${attempts}:00.000Z`,
          sent_at: null,
        })
        .execute()
        .then(() => id);
    };
    const pending = await delivery('pending', 0, null);
    const failing = await delivery('pending', 2, 'HTTP 500');
    const dead = await delivery('dead', 9, 'connect ECONNREFUSED');
    await delivery('sent', 1, null);
    const path = `/accounts/${account}/alerting/v3/deliveries`;
    const all = await f.call('GET', path, { token: f.readToken });
    assert.equal(all.status, 200);
    const rows = all.body.result as Array<Record<string, unknown>>;
    assert.deepEqual(
      rows.map((row) => [row.id, row.state, row.last_error, row.next_attempt_at]),
      [
        [dead, 'dead', 'connect ECONNREFUSED', null],
        [failing, 'failing', 'HTTP 500', '2031-01-01T00:10:00.000Z'],
        [pending, 'pending', null, '2031-01-01T00:10:00.000Z'],
      ],
    );
    assert.equal(rows[0]?.name, 'Pool main');
    const onlyDead = await f.call('GET', `${path}?state=dead`);
    assert.deepEqual(
      (onlyDead.body.result as Array<Record<string, unknown>>).map((row) => row.id),
      [dead],
    );
    assert.equal((await f.call('GET', `${path}?state=lost`)).status, 400);

    assert.equal((await f.call('POST', `${path}/${dead}/retry`, { token: f.readToken })).status, 403);
    assert.equal((await f.call('POST', `${path}/${pending}/retry`)).status, 400);
    assert.equal((await f.call('POST', `${path}/${randomUUID()}/retry`)).status, 404);
    const retried = await f.call('POST', `${path}/${dead}/retry`);
    assert.equal(retried.status, 200);
    assert.equal((retried.body.result as Record<string, unknown>).state, 'failing');
    // (Due now, the sender takes it at once: what becomes of it then is the sender's part, not asserted here.)
  });

  test('a webhook destination gets the test message on demand (write token only)', async () => {
    const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
    let answer = 200;
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(answer).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const hooks = `/accounts/${account}/alerting/v3/destinations/webhooks`;
      const made = await f.call('POST', hooks, { body: { name: 'ops', url, secret: 'console-test-secret' } });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const id = (made.body.result as { id: string }).id;
      assert.equal(received.length, 1, 'the create sent its own test message');
      assert.equal((await f.call('POST', `${hooks}/${id}/test`, { token: f.readToken })).status, 403);
      assert.equal(received.length, 1);
      const sent = await f.call('POST', `${hooks}/${id}/test`);
      assert.equal(sent.status, 200);
      assert.deepEqual(sent.body.result, { id, ok: true });
      assert.equal(received.length, 2);
      assert.match(JSON.parse(received[1]?.body ?? '{}').text, /test message/);
      assert.equal(received[1]?.headers['cf-webhook-auth'], 'console-test-secret');
      answer = 500;
      const failed = await f.call('POST', `${hooks}/${id}/test`);
      assert.equal(failed.status, 400);
      assert.match(JSON.stringify(failed.body.errors), /HTTP 500/);
      assert.equal((await f.call('POST', `${hooks}/${randomUUID()}/test`)).status, 404);
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  test('origin stats: the gateway’s attempts on a real anvil, summed with another instance’s counts', async () => {
    const calls = 20;
    for (let i = 0; i < calls; i += 1) {
      const res = await fetch(f.app.rpcUrl('sepolia'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: i,
          method: 'eth_getBalance',
          params: [`0x${'1'.repeat(40)}`, 'latest'],
        }),
      });
      assert.equal(res.status, 200);
      await res.text();
    }
    const pool = await f.sdk.loadBalancers.pools.list({ account_id: account });
    const poolId = pool.result.find((p) => p.name === 'main')?.id as string;
    // Another instance's flush for the same origin and minute: its counts add up with this one's.
    const minute = Math.floor(Date.now() / 60_000);
    const buckets = LATENCY_BUCKETS.map(() => 0);
    buckets[5] = 5;
    await addStats(f.app.store.db, [{ pool_id: poolId, origin_name: 'o0', minute, requests: 5, errors: 2, buckets }]);
    const path = `/accounts/${account}/load_balancers/origin_stats`;
    let stats: OriginStats | undefined;
    await waitFor(
      async () => {
        const res = await f.call('GET', `${path}?series=true`, { token: f.readToken });
        stats = (res.body.result as OriginStats[]).find((s) => s.pool_name === 'main');
        // The gateway's counts reach the store with the next 5 s flush.
        return (stats?.requests ?? 0) >= calls + 5;
      },
      'the gateway’s counts in origin_stats',
      15_000,
    );
    const s = stats as OriginStats;
    assert.equal(s.origin_name, 'o0');
    assert.equal(s.healthy, true);
    assert.equal(s.requests, calls + 5);
    assert.equal(s.errors, 2);
    assert.equal(s.error_rate, Math.round((2 / (calls + 5)) * 10000) / 10000);
    assert.ok(s.requests_per_second > 0);
    assert.ok(s.p50_ms !== null && s.p50_ms >= 0 && s.p50_ms <= 50, `p50 ${s.p50_ms}`);
    assert.equal(s.series?.length, 60);
    // The last point is the current minute (which may have rolled over since `minute` was taken).
    const last = Date.parse(s.series?.at(-1)?.minute ?? '') / 60_000;
    assert.ok(last === minute || last === minute + 1, `last point at minute ${last}, expected ${minute}`);
    assert.equal(
      s.series?.reduce((sum, p) => sum + p.requests, 0),
      calls + 5,
    );
    const short = await f.call('GET', `${path}?series=true&minutes=10`);
    assert.equal((short.body.result as OriginStats[])[0]?.series?.length, 10);
    assert.equal((await f.call('GET', `${path}?minutes=61`)).status, 400);
    assert.equal((await f.call('GET', `/accounts/${OTHER_ACCOUNT}/load_balancers/origin_stats`)).status, 403);
  });
});
