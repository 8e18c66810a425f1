// Pools and monitors through the official Cloudflare SDK: CRUD, defaults, references, validation, origins[].archive.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Cloudflare from 'cloudflare';
import { buildConfig } from '../../src/config/load.js';
import { isSwitchyardError } from '../../src/errors/base.js';
import { type ApiFixture, startApiFixture } from './setup.js';

type OriginParam = Cloudflare.LoadBalancers.PoolCreateParams['origins'][number];

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

  test('origins[].archive (Switchyard extension): default false, round-trips on POST, GET, list, PUT and PATCH', async () => {
    const account_id = f.accountId;
    // The SDK's OriginParam does not know `archive`; it sends the body as given.
    const origin = (name: string, archive?: unknown) =>
      ({
        name,
        address: `http://127.0.0.1:${name === 'full' ? 1 : 2}/`,
        ...(archive === undefined ? {} : { archive }),
      }) as OriginParam;
    const archiveOf = (pool: { origins?: unknown[] }) =>
      (pool.origins ?? []).map((o) => [(o as { name: string }).name, (o as { archive?: unknown }).archive]);

    const created = await f.sdk.loadBalancers.pools.create({
      account_id,
      name: 'archive-pool',
      origins: [origin('full', true), origin('pruned')],
    });
    assert.deepEqual(
      archiveOf(created),
      [
        ['full', true],
        ['pruned', false],
      ],
      'omitted means false, and is shown',
    );
    const id = created.id as string;
    assert.deepEqual(archiveOf(await f.sdk.loadBalancers.pools.get(id, { account_id })), archiveOf(created));
    const listed = await f.sdk.loadBalancers.pools.list({ account_id });
    assert.deepEqual(archiveOf(listed.result.find((p) => p.id === id) ?? {}), archiveOf(created));

    const patchedOther = await f.sdk.loadBalancers.pools.edit(id, { account_id, description: 'kept' });
    assert.deepEqual(archiveOf(patchedOther), archiveOf(created), 'PATCH of another field keeps archive');
    const patched = await f.sdk.loadBalancers.pools.edit(id, {
      account_id,
      origins: [origin('full', false), origin('pruned', true)],
    });
    assert.deepEqual(archiveOf(patched), [
      ['full', false],
      ['pruned', true],
    ]);
    // A pool fetched with GET can be sent back with PUT as it is.
    const fetched = await f.sdk.loadBalancers.pools.get(id, { account_id });
    const replaced = await f.sdk.loadBalancers.pools.update(id, {
      account_id,
      name: fetched.name as string,
      origins: fetched.origins as OriginParam[],
    });
    assert.deepEqual(archiveOf(replaced), [
      ['full', false],
      ['pruned', true],
    ]);
    const reset = await f.sdk.loadBalancers.pools.update(id, {
      account_id,
      name: 'archive-pool',
      origins: [origin('full'), origin('pruned')],
    });
    assert.deepEqual(
      archiveOf(reset),
      [
        ['full', false],
        ['pruned', false],
      ],
      'PUT resets an omitted archive',
    );

    for (const value of ['true', 1, null, {}]) {
      await assert.rejects(
        f.sdk.loadBalancers.pools.edit(id, { account_id, origins: [origin('full'), origin('pruned', value)] }),
        (err: unknown) => {
          assert.ok(err instanceof Cloudflare.BadRequestError, String(err));
          const first = (err.errors as { code: number; message: string }[])[0];
          assert.equal(first?.code, 1002);
          assert.match(first?.message ?? '', /^origins\.1\.archive:/);
          return true;
        },
      );
    }
    assert.deepEqual(archiveOf(await f.sdk.loadBalancers.pools.get(id, { account_id })), archiveOf(reset));
    await f.sdk.loadBalancers.pools.delete(id, { account_id });
  });

  test('a pool row stored before origins had `archive` reads as archive false; its next write stores the field', async () => {
    const account_id = f.accountId;
    const id = 'a1'.repeat(16);
    // The settings JSON exactly as earlier versions wrote it (no migration adds the field).
    await f.app.store.db
      .insertInto('pools')
      .values({
        id,
        account_id,
        name: 'stored-before-archive',
        notification_email: '',
        monitor_id: null,
        enabled: 1,
        settings: JSON.stringify({
          description: '',
          minimum_origins: 1,
          notification_filter: null,
          origins: [{ name: 'o', address: 'http://127.0.0.1:1/', enabled: true, weight: 1, header: {} }],
          origin_steering: { policy: 'random' },
          check_regions: null,
        }),
        created_on: '2026-01-01T00:00:00.000Z',
        modified_on: '2026-01-01T00:00:00.000Z',
      })
      .execute();
    const got = await f.sdk.loadBalancers.pools.get(id, { account_id });
    assert.equal((got.origins?.[0] as { archive?: unknown } | undefined)?.archive, false);
    await f.sdk.loadBalancers.pools.edit(id, { account_id, description: 'touched' });
    const row = await f.app.store.db
      .selectFrom('pools')
      .select('settings')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal((JSON.parse(row.settings) as { origins: { archive?: unknown }[] }).origins[0]?.archive, false);
    await f.sdk.loadBalancers.pools.delete(id, { account_id });
  });

  test('origins[].archive from the config file: seeded as given, shown through the SDK; a non-boolean is refused', async () => {
    const origins = [
      { name: 'archive-node', address: 'http://127.0.0.1:1', archive: true },
      { name: 'full-node', address: 'http://127.0.0.1:2' },
    ];
    const seeded = await startApiFixture({ pools: [{ name: 'from-config', origins }] });
    try {
      const [pool] = (await seeded.sdk.loadBalancers.pools.list({ account_id: seeded.accountId })).result.filter(
        (p) => p.name === 'from-config',
      );
      assert.deepEqual(
        pool?.origins?.map((o) => [o.name, (o as { archive?: unknown }).archive]),
        [
          ['archive-node', true],
          ['full-node', false],
        ],
      );
    } finally {
      await seeded.close();
    }
    assert.throws(
      () => buildConfig({ pools: [{ name: 'p', origins: [{ ...origins[0], archive: 'yes' }] }] }, 'switchyard.yaml'),
      (err: unknown) => {
        assert.ok(isSwitchyardError(err) && err.code === 'CONFIG_INVALID', String(err));
        assert.match(err.message, /^switchyard\.yaml: pools\.0\.origins\.0\.archive: /);
        return true;
      },
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
