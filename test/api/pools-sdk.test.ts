// Pools and monitors through the official Cloudflare SDK: CRUD, defaults, references, validation.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Cloudflare from 'cloudflare';
import { type ApiFixture, startApiFixture } from './setup.js';

describe('pools and monitors through the cloudflare SDK', () => {
  let f: ApiFixture;
  before(async () => {
    f = await startApiFixture();
  });
  after(() => f.close());

  test('monitor CRUD with Cloudflare defaults and the jsonrpc extension', async () => {
    const account_id = f.accountId;
    const http = await f.sdk.loadBalancers.monitors.create({ account_id, description: 'plain' });
    assert.match(http.id ?? '', /^[0-9a-f]{32}$/);
    assert.equal(http.type, 'http');
    assert.equal(http.method, 'GET');
    assert.equal(http.path, '/');
    assert.equal(http.interval, 60);
    assert.equal(http.timeout, 5);
    assert.equal(http.retries, 2);
    assert.equal(http.expected_codes, '200');
    assert.equal(http.follow_redirects, false);
    assert.equal((http as Record<string, unknown>).max_block_lag, undefined);

    const rpc = await f.sdk.loadBalancers.monitors.create({
      account_id,
      // `jsonrpc` and max_block_lag are Switchyard's extension; the SDK types do not know them.
      ...({ type: 'jsonrpc', max_block_lag: 4 } as object),
      interval: 5,
    } as Cloudflare.LoadBalancers.MonitorCreateParams);
    assert.equal(rpc.type as string, 'jsonrpc');
    assert.equal((rpc as Record<string, unknown>).max_block_lag, 4);

    const got = await f.sdk.loadBalancers.monitors.get(rpc.id as string, { account_id });
    assert.deepEqual(got, rpc);
    const patched = await f.sdk.loadBalancers.monitors.edit(rpc.id as string, { account_id, interval: 10 });
    assert.equal(patched.interval, 10);
    assert.equal((patched as Record<string, unknown>).max_block_lag, 4);
    const replaced = await f.sdk.loadBalancers.monitors.update(
      http.id as string,
      {
        account_id,
        path: '/health',
      } as Cloudflare.LoadBalancers.MonitorUpdateParams,
    );
    assert.equal(replaced.path, '/health');
    assert.equal(replaced.description, '', 'PUT resets omitted fields to defaults');

    const listed = await f.sdk.loadBalancers.monitors.list({ account_id });
    assert.deepEqual(listed.result.map((m) => m.id).sort(), [http.id, rpc.id].sort());

    await f.sdk.loadBalancers.monitors.delete(http.id as string, { account_id });
    await assert.rejects(f.sdk.loadBalancers.monitors.get(http.id as string, { account_id }), (err: unknown) => {
      assert.ok(err instanceof Cloudflare.NotFoundError);
      return true;
    });
  });

  test('pool CRUD: defaults, get, put, patch, references, delete', async () => {
    const account_id = f.accountId;
    const monitor = await f.sdk.loadBalancers.monitors.create({ account_id });
    const pool = await f.sdk.loadBalancers.pools.create({
      account_id,
      name: 'crud-pool',
      origins: [
        { name: 'a', address: 'http://127.0.0.1:1/' },
        { name: 'b', address: '127.0.0.1:2', weight: 0.5 },
      ],
      monitor: monitor.id as string,
      notification_email: 'ops@example.com',
    });
    assert.match(pool.id ?? '', /^[0-9a-f]{32}$/);
    assert.equal(pool.enabled, true);
    assert.equal(pool.minimum_origins, 1);
    assert.equal(pool.description, '');
    assert.equal(pool.notification_email, 'ops@example.com');
    assert.deepEqual(pool.origin_steering, { policy: 'random' });
    assert.deepEqual(pool.networks, []);
    assert.equal(typeof (pool as Record<string, unknown>).healthy, 'boolean');
    assert.equal(pool.origins?.[0]?.enabled, true);
    assert.equal(pool.origins?.[0]?.weight, 1);
    assert.equal(pool.origins?.[1]?.weight, 0.5);
    assert.deepEqual(pool.origins?.[0]?.header, {});

    const got = await f.sdk.loadBalancers.pools.get(pool.id as string, { account_id });
    assert.deepEqual(got, pool);
    const byMonitor = await f.sdk.loadBalancers.pools.list({ account_id, monitor: monitor.id as string });
    assert.deepEqual(
      byMonitor.result.map((p) => p.id),
      [pool.id],
    );
    const byOther = await f.sdk.loadBalancers.pools.list({ account_id, monitor: 'f'.repeat(32) });
    assert.deepEqual(byOther.result, []);

    const edited = await f.sdk.loadBalancers.pools.edit(pool.id as string, { account_id, enabled: false });
    assert.equal(edited.enabled, false);
    assert.ok(edited.disabled_at);
    assert.equal(edited.notification_email, 'ops@example.com', 'PATCH keeps other fields');

    const refs = await f.sdk.loadBalancers.monitors.references.get(monitor.id as string, { account_id });
    assert.deepEqual(
      refs.result.map((r) => [r.reference_type, r.resource_type, r.resource_id]),
      [['referrer', 'pool', pool.id]],
    );
    const poolRefs = await f.sdk.loadBalancers.pools.references.get(pool.id as string, { account_id });
    assert.deepEqual(
      poolRefs.result.map((r) => [r.reference_type, r.resource_type, r.resource_id]),
      [['referral', 'monitor', monitor.id]],
    );
    await assert.rejects(f.sdk.loadBalancers.monitors.delete(monitor.id as string, { account_id }), (err: unknown) => {
      assert.ok(err instanceof Cloudflare.BadRequestError);
      assert.match((err.errors as { message: string }[])[0]?.message ?? '', /"crud-pool"/);
      return true;
    });

    const replaced = await f.sdk.loadBalancers.pools.update(pool.id as string, {
      account_id,
      name: 'crud-pool-renamed',
      origins: [{ name: 'c', address: 'https://node.example:8545/rpc' }],
    });
    assert.equal(replaced.name, 'crud-pool-renamed');
    assert.equal(replaced.enabled, true, 'PUT resets omitted fields to defaults');
    assert.equal(replaced.notification_email, '');
    assert.equal(replaced.monitor, undefined);
    assert.equal(replaced.disabled_at, undefined);

    const health = await f.sdk.loadBalancers.pools.health.get(pool.id as string, { account_id });
    assert.equal(health.pool_id, pool.id);

    const deleted = await f.sdk.loadBalancers.pools.delete(pool.id as string, { account_id });
    assert.equal(deleted.id, pool.id);
    await assert.rejects(f.sdk.loadBalancers.pools.get(pool.id as string, { account_id }), Cloudflare.NotFoundError);
    await f.sdk.loadBalancers.monitors.delete(monitor.id as string, { account_id });
  });

  test('validation errors are 400 / 1002 naming the field; duplicate names 400 / 1003', async () => {
    const account_id = f.accountId;
    const bad = async (params: Record<string, unknown>, field: RegExp, code = 1002) => {
      await assert.rejects(
        f.sdk.loadBalancers.pools.create({ account_id, ...params } as Cloudflare.LoadBalancers.PoolCreateParams),
        (err: unknown) => {
          assert.ok(err instanceof Cloudflare.BadRequestError, String(err));
          const first = (err.errors as { code: number; message: string }[])[0];
          assert.equal(first?.code, code);
          assert.match(first?.message ?? '', field);
          return true;
        },
      );
    };
    const origins = [{ name: 'a', address: 'http://127.0.0.1:1' }];
    await bad({ origins }, /^name:/);
    await bad({ name: 'x' }, /^origins:/);
    await bad({ name: 'bad name!', origins }, /^name:/);
    await bad({ name: 'x', origins: [] }, /^origins:/);
    await bad({ name: 'x', origins: [{ name: 'a', address: 'ftp://h' }] }, /^origins\.0\.address:/);
    await bad({ name: 'x', origins: [{ name: 'a', address: 'h:1', weight: 2 }] }, /^origins\.0\.weight:/);
    await bad({ name: 'x', origins: [...origins, ...origins] }, /^origins\.1\.name:/);
    await bad({ name: 'x', origins, notification_email: 'not-an-address' }, /^notification_email:/);
    await bad({ name: 'x', origins, notification_email: 'a@example.com,' }, /^notification_email:/);
    await bad({ name: 'x', origins, monitor: 'f'.repeat(32) }, /^monitor:/);
    await bad({ name: 'x', origins, latitude: 10 }, /^longitude:/);
    await bad({ name: 'x', origins, surprise: 1 }, /surprise/);
    await f.sdk.loadBalancers.pools.create({ account_id, name: 'dup', origins });
    await bad({ name: 'dup', origins }, /^name:/, 1003);
    const listed = await f.sdk.loadBalancers.pools.list({ account_id });
    assert.deepEqual(
      listed.result.map((p) => p.name),
      ['dup'],
      'refused bodies created nothing',
    );
  });

  test('the OpenAPI document is generated from the schemas that validate requests', async () => {
    const doc = (await (await fetch(`${f.app.apiUrl}/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: Record<string, unknown> }> } }>
      >;
    };
    assert.equal(doc.openapi, '3.1.0');
    const create = doc.paths['/accounts/{account_id}/load_balancers/pools']?.post?.requestBody?.content[
      'application/json'
    ]?.schema as {
      required: string[];
      properties: Record<string, { maximum?: number }>;
      additionalProperties: boolean;
    };
    assert.deepEqual([...create.required].sort(), ['name', 'origins']);
    assert.equal(create.additionalProperties, false);
    assert.ok(create.properties.notification_email);
    const bulk = doc.paths['/accounts/{account_id}/load_balancers/pools']?.patch?.requestBody?.content[
      'application/json'
    ]?.schema as { properties: Record<string, { const?: string }> };
    assert.equal(bulk.properties.notification_email?.const, '');
    const monitor = doc.paths['/accounts/{account_id}/load_balancers/monitors']?.post?.requestBody?.content[
      'application/json'
    ]?.schema as { properties: Record<string, { enum?: string[] }> };
    assert.deepEqual(monitor.properties.type?.enum, ['http', 'https', 'jsonrpc']);
    assert.ok(monitor.properties.max_block_lag);
  });
});
