// Every pool, origin and monitor field of CLOUDFLARE-API.md against the wire: the exact objects and their
// defaults, fields that appear only in some states (disabled_at, monitor, latitude/longitude,
// load_shedding), and a table of refused values — each a 400 / 1002 naming the field, changing nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ApiFixture, type Envelope, startApiFixture } from './setup.js';

type Obj = Record<string, unknown>;
const ORIGIN = { name: 'o', address: '127.0.0.1:1' };

describe('pool, origin and monitor fields', () => {
  let f: ApiFixture;
  let pools = '';
  let monitors = '';
  before(async () => {
    f = await startApiFixture();
    pools = `/accounts/${f.accountId}/load_balancers/pools`;
    monitors = `/accounts/${f.accountId}/load_balancers/monitors`;
  });
  after(() => f.close());

  const ok = async (method: string, path: string, body?: unknown): Promise<Obj> => {
    const res = await f.call(method, path, { body });
    assert.equal(res.status, 200, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(res.body.errors)}`);
    return res.body.result as Obj;
  };
  const refused = async (method: string, path: string, body: unknown, field: string): Promise<Envelope> => {
    const res = await f.call(method, path, { body });
    const what = `${method} ${JSON.stringify(body)}`;
    assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.success, false);
    assert.equal(res.body.result, null);
    assert.equal(res.body.errors[0]?.code, 1002, what);
    assert.ok(res.body.errors[0]?.message.startsWith(`${field}:`), `${what}: "${res.body.errors[0]?.message}"`);
    return res.body;
  };

  test('a pool with only name and origins has exactly the Cloudflare fields and defaults (+ origins[].archive)', async () => {
    const pool = await ok('POST', pools, { name: 'defaults', origins: [ORIGIN] });
    assert.deepEqual(Object.keys(pool).sort(), [
      'check_regions',
      'created_on',
      'description',
      'enabled',
      'healthy',
      'id',
      'minimum_origins',
      'modified_on',
      'name',
      'networks',
      'notification_email',
      'notification_filter',
      'origin_steering',
      'origins',
    ]);
    assert.match(pool.id as string, /^[0-9a-f]{32}$/);
    assert.match(pool.created_on as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.equal(pool.modified_on, pool.created_on);
    assert.deepEqual(
      { ...pool, id: 0, created_on: 0, modified_on: 0 },
      {
        id: 0,
        created_on: 0,
        modified_on: 0,
        name: 'defaults',
        description: '',
        enabled: true,
        minimum_origins: 1,
        notification_email: '',
        notification_filter: null,
        origins: [
          { name: 'o', address: '127.0.0.1:1', enabled: true, weight: 1, header: {}, archive: false, healthy: true },
        ],
        origin_steering: { policy: 'random' },
        check_regions: null,
        networks: [],
        healthy: true,
      },
    );
  });

  test('disabled_at appears only while disabled, for the pool and for each origin', async () => {
    const created = await ok('POST', pools, {
      name: 'toggle',
      origins: [ORIGIN, { name: 'off', address: '127.0.0.1:2', enabled: false }],
    });
    const id = created.id as string;
    const origins = () => created.origins as Obj[];
    assert.equal('disabled_at' in created, false);
    assert.equal('disabled_at' in (origins()[0] as Obj), false);
    const originSince = (origins()[1] as Obj).disabled_at as string;
    assert.match(originSince, /Z$/);

    const disabled = await ok('PATCH', `${pools}/${id}`, { enabled: false });
    const since = disabled.disabled_at as string;
    assert.match(since, /Z$/);
    const later = await ok('PATCH', `${pools}/${id}`, { description: 'still off' });
    assert.equal(later.disabled_at, since, 'kept while the pool stays disabled');
    assert.equal(((later.origins as Obj[])[1] as Obj).disabled_at, originSince, 'kept while the origin stays off');
    const enabled = await ok('PATCH', `${pools}/${id}`, {
      enabled: true,
      origins: [ORIGIN, { name: 'off', address: '127.0.0.1:2' }],
    });
    assert.equal('disabled_at' in enabled, false);
    assert.ok((enabled.origins as Obj[]).every((origin) => !('disabled_at' in origin)));
    // A disabled_at sent back (GET → PUT) is read-only: ignored.
    const put = await ok('PUT', `${pools}/${id}`, { ...enabled, disabled_at: '2020-01-01T00:00:00Z' });
    assert.equal('disabled_at' in put, false);
  });

  test('monitor appears only when set; "" or null removes it', async () => {
    const monitor = await ok('POST', monitors, {});
    const pool = await ok('POST', pools, { name: 'watched', origins: [ORIGIN], monitor: monitor.id });
    assert.equal(pool.monitor, monitor.id);
    const cleared = await ok('PATCH', `${pools}/${pool.id}`, { monitor: '' });
    assert.equal('monitor' in cleared, false);
    await ok('PATCH', `${pools}/${pool.id}`, { monitor: monitor.id });
    assert.equal('monitor' in (await ok('PATCH', `${pools}/${pool.id}`, { monitor: null })), false);
    await ok('DELETE', `${monitors}/${monitor.id}`);
  });

  test('latitude and longitude: both or neither; null removes them', async () => {
    const pool = await ok('POST', pools, { name: 'geo', origins: [ORIGIN], latitude: 52.5, longitude: 13.4 });
    assert.equal(pool.latitude, 52.5);
    assert.equal(pool.longitude, 13.4);
    await refused('PATCH', `${pools}/${pool.id}`, { latitude: null }, 'latitude');
    await refused('POST', pools, { name: 'geo2', origins: [ORIGIN], longitude: 1 }, 'latitude');
    await refused('POST', pools, { name: 'geo2', origins: [ORIGIN], latitude: 91, longitude: 0 }, 'latitude');
    await refused('POST', pools, { name: 'geo2', origins: [ORIGIN], latitude: 0, longitude: -181 }, 'longitude');
    await refused('POST', pools, { name: 'geo2', origins: [ORIGIN], latitude: '1', longitude: 0 }, 'latitude');
    const moved = await ok('PATCH', `${pools}/${pool.id}`, { longitude: -0.1 });
    assert.deepEqual([moved.latitude, moved.longitude], [52.5, -0.1]);
    const removed = await ok('PATCH', `${pools}/${pool.id}`, { latitude: null, longitude: null });
    assert.equal('latitude' in removed, false);
    assert.equal('longitude' in removed, false);
  });

  test('load_shedding: Cloudflare defaults filled in, percentages 0..100, null removes it', async () => {
    const pool = await ok('POST', pools, { name: 'shed', origins: [ORIGIN], load_shedding: {} });
    assert.deepEqual(pool.load_shedding, {
      default_percent: 0,
      default_policy: 'random',
      session_percent: 0,
      session_policy: 'hash',
    });
    const set = await ok('PATCH', `${pools}/${pool.id}`, {
      load_shedding: { default_percent: 100, default_policy: 'hash' },
    });
    assert.deepEqual(set.load_shedding, {
      default_percent: 100,
      default_policy: 'hash',
      session_percent: 0,
      session_policy: 'hash',
    });
    for (const [value, field] of [
      [{ default_percent: 101 }, 'load_shedding.default_percent'],
      [{ default_percent: -1 }, 'load_shedding.default_percent'],
      [{ session_percent: 100.5 }, 'load_shedding.session_percent'],
      [{ default_policy: 'least' }, 'load_shedding.default_policy'],
      [{ session_policy: 'random' }, 'load_shedding.session_policy'],
      [{ surprise: 1 }, 'load_shedding.surprise'],
      ['50', 'load_shedding'],
    ] as const) {
      await refused('PATCH', `${pools}/${pool.id}`, { load_shedding: value }, field);
    }
    assert.equal('load_shedding' in (await ok('PATCH', `${pools}/${pool.id}`, { load_shedding: null })), false);
  });

  test('refused pool bodies: 400 / 1002 naming the field, and nothing changes', async () => {
    const pool = await ok('POST', pools, { name: 'target', origins: [ORIGIN], notification_email: 'ops@example.com' });
    const path = `${pools}/${pool.id}`;
    const origin = (extra: Obj) => ({ origins: [{ ...ORIGIN, ...extra }] });
    const cases: [Obj, string][] = [
      [{ name: '' }, 'name'],
      [{ name: 'has space' }, 'name'],
      [{ name: 'dot.ted' }, 'name'],
      [{ name: 'ümlaut' }, 'name'],
      [{ name: 'x'.repeat(101) }, 'name'],
      [{ name: 7 }, 'name'],
      [{ origins: [] }, 'origins'],
      [{ origins: null }, 'origins'],
      [{ origins: [ORIGIN, { ...ORIGIN, address: '127.0.0.1:2' }] }, 'origins.1.name'],
      [origin({ name: '' }), 'origins.0.name'],
      [origin({ address: '' }), 'origins.0.address'],
      [origin({ address: 'ftp://h' }), 'origins.0.address'],
      [origin({ address: 'http://h:99999' }), 'origins.0.address'],
      [origin({ weight: 1.01 }), 'origins.0.weight'],
      [origin({ weight: -0.1 }), 'origins.0.weight'],
      [origin({ enabled: 'yes' }), 'origins.0.enabled'],
      [origin({ archive: 'true' }), 'origins.0.archive'],
      [origin({ archive: 1 }), 'origins.0.archive'],
      [origin({ archive: null }), 'origins.0.archive'],
      [origin({ header: { Host: 'rpc.example' } }), 'origins.0.header.Host'],
      [origin({ header: { Host: [] } }), 'origins.0.header.Host'],
      [origin({ header: { Host: ['a\r\nX-Injected: 1'] } }), 'origins.0.header.Host.0'],
      [origin({ header: { 'X-Bad\r\nName': ['v'] } }), 'origins.0.header'],
      [origin({ header: { 'bad name': ['v'] } }), 'origins.0.header'],
      [origin({ header: { 'Transfer-Encoding': ['chunked'] } }), 'origins.0.header'],
      [origin({ header: { 'Content-Length': ['1'] } }), 'origins.0.header'],
      [origin({ header: { Connection: ['close'] } }), 'origins.0.header'],
      [origin({ header: { Host: ['a'], host: ['b'] } }), 'origins.0.header.host'],
      [origin({ surprise: true }), 'origins.0.surprise'],
      [{ enabled: 'false' }, 'enabled'],
      [{ description: 'x'.repeat(1025) }, 'description'],
      [{ minimum_origins: -1 }, 'minimum_origins'],
      [{ minimum_origins: 1.5 }, 'minimum_origins'],
      [{ notification_email: 'not-an-address' }, 'notification_email'],
      [{ notification_email: 'a@example.com,' }, 'notification_email'],
      [{ notification_email: 'a@example.com;b@example.com' }, 'notification_email'],
      [{ notification_email: 'a@.example.com' }, 'notification_email'],
      [{ notification_email: 'a@example' }, 'notification_email'],
      [{ notification_email: ' ' }, 'notification_email'],
      [{ notification_email: null }, 'notification_email'],
      [{ notification_email: `${'a'.repeat(60)}@example.com,`.repeat(40).slice(0, -1) }, 'notification_email'],
      [{ notification_filter: { origin: { healthy: 'yes' } } }, 'notification_filter.origin.healthy'],
      [{ notification_filter: { origin: { disable: 1 } } }, 'notification_filter.origin.disable'],
      [{ notification_filter: { network: {} } }, 'notification_filter.network'],
      [{ notification_filter: [] }, 'notification_filter'],
      [{ origin_steering: { policy: 'round_robin' } }, 'origin_steering.policy'],
      [{ check_regions: ['MARS'] }, 'check_regions.0'],
      [{ monitor: 'f'.repeat(32) }, 'monitor'],
      [{ networks: 'ignored', surprise: 1 }, 'surprise'],
    ];
    for (const [body, field] of cases) await refused('PATCH', path, body, field);
    await refused('PUT', path, { name: 'target' }, 'origins');
    await refused('PUT', path, { origins: [ORIGIN] }, 'name');
    const after = await ok('GET', path);
    assert.deepEqual(after, pool, 'refused writes changed nothing');
  });

  test('renaming onto a name the account already uses is 400 / 1003 (PUT and PATCH); names are case-sensitive', async () => {
    await ok('POST', pools, { name: 'taken', origins: [ORIGIN] });
    const mover = await ok('POST', pools, { name: 'mover', origins: [ORIGIN] });
    for (const [method, body] of [
      ['PATCH', { name: 'taken' }],
      ['PUT', { name: 'taken', origins: [ORIGIN] }],
    ] as const) {
      const res = await f.call(method, `${pools}/${mover.id}`, { body });
      assert.equal(res.status, 400, method);
      assert.equal(res.body.errors[0]?.code, 1003, method);
      assert.match(res.body.errors[0]?.message ?? '', /^name:/);
    }
    assert.equal((await ok('PATCH', `${pools}/${mover.id}`, { name: 'Taken' })).name, 'Taken');
    assert.equal(
      (await ok('PATCH', `${pools}/${mover.id}`, { name: 'Taken' })).name,
      'Taken',
      'its own name is no clash',
    );
  });

  test('accepted pool values: addresses, emails, filters, steering, regions, Host header', async () => {
    const pool = await ok('POST', pools, {
      name: 'A-b_9',
      origins: [
        { name: 'url', address: 'https://node.example:8545/rpc', header: { Host: ['rpc.example'] } },
        { name: 'bare', address: 'node.example:8545', weight: 0 },
        { name: 'ipv6', address: 'http://[::1]:8545/' },
      ],
      notification_email: 'ops@example.com, oncall+lb@mail.example.org',
      notification_filter: { origin: { healthy: null, disable: true }, pool: null },
      origin_steering: { policy: 'least_outstanding_requests' },
      check_regions: ['WEU', 'ENAM'],
      minimum_origins: 0,
    });
    assert.equal(pool.notification_email, 'ops@example.com, oncall+lb@mail.example.org');
    assert.deepEqual(pool.notification_filter, { origin: { healthy: null, disable: true }, pool: null });
    assert.deepEqual(pool.origin_steering, { policy: 'least_outstanding_requests' });
    assert.deepEqual(pool.check_regions, ['WEU', 'ENAM']);
    assert.deepEqual(((pool.origins as Obj[])[0] as Obj).header, { Host: ['rpc.example'] });
    const reset = await ok('PATCH', `${pools}/${pool.id}`, { origin_steering: null, notification_filter: null });
    assert.deepEqual(reset.origin_steering, { policy: 'random' });
    assert.equal(reset.notification_filter, null);
  });

  test('monitor objects: exact fields and defaults; max_block_lag only on jsonrpc; refused values', async () => {
    const monitor = await ok('POST', monitors, {});
    assert.deepEqual(
      { ...monitor, id: 0, created_on: 0, modified_on: 0 },
      {
        id: 0,
        created_on: 0,
        modified_on: 0,
        type: 'http',
        method: 'GET',
        path: '/',
        header: {},
        port: 0,
        timeout: 5,
        retries: 2,
        interval: 60,
        expected_codes: '200',
        expected_body: '',
        follow_redirects: false,
        allow_insecure: false,
        consecutive_up: 0,
        consecutive_down: 0,
        description: '',
      },
    );
    const rpc = await ok('POST', monitors, { type: 'jsonrpc' });
    assert.equal(rpc.max_block_lag, 8);
    const path = `${monitors}/${monitor.id}`;
    const cases: [Obj, string][] = [
      [{ type: 'tcp' }, 'type'],
      [{ method: 'get' }, 'method'],
      [{ method: 'CONNECT' }, 'method'],
      [{ path: 'health' }, 'path'],
      [{ port: 65536 }, 'port'],
      [{ timeout: 0 }, 'timeout'],
      [{ timeout: 11 }, 'timeout'],
      [{ retries: 6 }, 'retries'],
      [{ interval: 0 }, 'interval'],
      [{ interval: 1.5 }, 'interval'],
      [{ expected_codes: 'ok' }, 'expected_codes'],
      [{ consecutive_up: -1 }, 'consecutive_up'],
      [{ max_block_lag: -1 }, 'max_block_lag'],
      [{ header: { Authorization: ['a\nb'] } }, 'header.Authorization.0'],
      [{ header: { Upgrade: ['h2c'] } }, 'header'],
      [{ probe_zone: 'x' }, 'probe_zone'],
    ];
    for (const [body, field] of cases) await refused('PATCH', path, body, field);
    assert.deepEqual(await ok('GET', path), monitor, 'refused writes changed nothing');
  });

  test('unknown or malformed ids are 404 / 7003 on every pool and monitor route, never echoed', async () => {
    const odd = [
      'f'.repeat(32),
      'F'.repeat(32),
      'x'.repeat(300),
      '..%2F..%2Fetc%2Fpasswd',
      '%00',
      '%E2%80%AE',
      '1%20OR%201=1',
    ];
    const pool = { name: 'n', origins: [ORIGIN] };
    for (const id of odd) {
      for (const [method, path, body] of [
        ['GET', `${pools}/${id}`, undefined],
        ['PUT', `${pools}/${id}`, pool],
        ['PATCH', `${pools}/${id}`, { description: 'x' }],
        ['DELETE', `${pools}/${id}`, undefined],
        ['GET', `${pools}/${id}/health`, undefined],
        ['GET', `${pools}/${id}/references`, undefined],
        ['GET', `${monitors}/${id}`, undefined],
        ['PUT', `${monitors}/${id}`, {}],
        ['PATCH', `${monitors}/${id}`, {}],
        ['DELETE', `${monitors}/${id}`, undefined],
        ['GET', `${monitors}/${id}/references`, undefined],
      ] as const) {
        const res = await f.call(method, path, { body });
        assert.equal(res.status, 404, `${method} ${path}`);
        assert.equal(res.body.errors[0]?.code, 7003, `${method} ${path}`);
        if (id !== 'f'.repeat(32)) {
          assert.ok(!res.body.errors[0]?.message.includes(decodeURIComponent(id)), `${method} ${path} echoes the id`);
        }
      }
    }
  });
});
