/**
 * Input hygiene on the management API (SPEC §8): `__proto__`, `constructor` and `prototype` as object keys
 * anywhere in a body, and control characters in names, descriptions, header values and monitor paths,
 * are 400 / 1002 naming the field, on every resource — and every refused write changes nothing (each
 * object is read back unchanged, lists keep their length).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { insertDestination } from '../../src/notifications/queries/destinations.js';
import { type ApiFixture, startApiFixture } from './setup.js';

describe('input hygiene', () => {
  let f: ApiFixture;
  let base: string;
  const ids = { pool: '', monitor: '', policy: '', destination: 'd0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0' };

  const get = async (path: string) => {
    const res = await f.call('GET', path);
    assert.equal(res.status, 200, path);
    return res.body.result;
  };
  /** Sends a body that must be refused with 400 / 1002 whose message starts with `field`; then nothing changed. */
  const refused = async (method: string, path: string, body: unknown, field: string, readBack: string) => {
    const before = await get(readBack);
    const res = await f.call(method, path, { body });
    assert.equal(res.status, 400, `${method} ${path} ${JSON.stringify(body).slice(0, 120)}`);
    assert.equal(res.body.errors[0]?.code, 1002);
    assert.ok(
      res.body.errors[0]?.message.startsWith(`${field}: `),
      `names ${field}: ${res.body.errors[0]?.message ?? ''}`,
    );
    assert.deepEqual(await get(readBack), before, `${readBack} unchanged`);
    return res.body.errors[0]?.message ?? '';
  };

  before(async () => {
    f = await startApiFixture();
    base = `/accounts/${f.accountId}`;
    const monitor = await f.call('POST', `${base}/load_balancers/monitors`, { body: { description: 'm', path: '/' } });
    assert.equal(monitor.status, 200, JSON.stringify(monitor.body.errors));
    ids.monitor = (monitor.body.result as { id: string }).id;
    const pool = await f.call('POST', `${base}/load_balancers/pools`, {
      body: { name: 'hygiene', description: 'd', origins: [{ name: 'a', address: '127.0.0.1:1' }] },
    });
    assert.equal(pool.status, 200, JSON.stringify(pool.body.errors));
    ids.pool = (pool.body.result as { id: string }).id;
    const policy = await f.call('POST', `${base}/alerting/v3/policies`, {
      body: {
        name: 'p',
        alert_type: 'load_balancing_health_alert',
        enabled: true,
        mechanisms: { email: [{ id: 'ops@example.com' }] },
        filters: { new_health: ['Unhealthy'] },
      },
    });
    assert.equal(policy.status, 200, JSON.stringify(policy.body.errors));
    ids.policy = (policy.body.result as { id: string }).id;
    await insertDestination(
      f.app.store.db,
      f.app.secrets,
      f.accountId,
      ids.destination,
      { name: 'hook', url: 'http://127.0.0.1:9/hook', secret: null },
      new Date().toISOString(),
    );
  });
  after(() => f.close());

  describe('__proto__, constructor and prototype keys', () => {
    test('"filters": {"__proto__": [...]} is refused, not stored as a policy without filters', async () => {
      const policies = `${base}/alerting/v3/policies`;
      const count = (await get(policies)) as unknown[];
      const body =
        '{"name":"x","alert_type":"load_balancing_health_alert","enabled":true,' +
        '"mechanisms":{"email":[{"id":"ops@example.com"}]},"filters":{"__proto__":["Unhealthy"]}}';
      const res = await f.call('POST', policies, { body });
      assert.equal(res.status, 400);
      assert.equal(res.body.errors[0]?.code, 1002);
      assert.match(res.body.errors[0]?.message ?? '', /^filters\.__proto__: "__proto__" is not allowed as a key/);
      assert.equal(((await get(policies)) as unknown[]).length, count.length, 'no policy was created');
      await refused(
        'PUT',
        `${policies}/${ids.policy}`,
        JSON.parse('{"filters":{"__proto__":["Unhealthy"]}}'),
        'filters.__proto__',
        `${policies}/${ids.policy}`,
      );
    });

    test('any depth, any resource, escaped spellings too', async () => {
      const pool = `${base}/load_balancers/pools/${ids.pool}`;
      const monitor = `${base}/load_balancers/monitors/${ids.monitor}`;
      await refused(
        'PATCH',
        pool,
        '{"origins":[{"name":"a","address":"127.0.0.1:1","header":{"constructor":["x"]}}]}',
        'origins.0.header.constructor',
        pool,
      );
      await refused('PUT', monitor, '{"prototype":{"x":1}}', 'prototype', monitor);
      await refused('PATCH', monitor, '{"header":{"\\u005f_proto__":["v"]}}', 'header.__proto__', monitor);
      await refused(
        'PUT',
        `${base}/alerting/v3/destinations/webhooks/${ids.destination}`,
        '{"name":"hook","constructor":"x"}',
        'constructor',
        `${base}/alerting/v3/destinations/webhooks/${ids.destination}`,
      );
      const pools = `${base}/load_balancers/pools`;
      const listed = ((await get(pools)) as unknown[]).length;
      const res = await f.call('POST', pools, {
        body: '{"name":"p2","origins":[{"name":"a","address":"127.0.0.1:1"}],"load_shedding":{"__proto__":{}}}',
      });
      assert.equal(res.status, 400);
      assert.match(res.body.errors[0]?.message ?? '', /^load_shedding\.__proto__: /);
      assert.equal(((await get(pools)) as unknown[]).length, listed);
    });

    test('the words as values are fine', async () => {
      const res = await f.call('PATCH', `${base}/load_balancers/pools/${ids.pool}`, {
        body: { description: '__proto__ constructor prototype' },
      });
      assert.equal(res.status, 200);
      await f.call('PATCH', `${base}/load_balancers/pools/${ids.pool}`, { body: { description: 'd' } });
    });
  });

  describe('control characters', () => {
    const bad = ['line\nbreak', 'carriage\rreturn', 'tab\there', 'esc\u001b[31m', 'c1\u0085next', 'ls\u2028x'];

    test('pools: description, origin name', async () => {
      const pool = `${base}/load_balancers/pools/${ids.pool}`;
      for (const value of bad) {
        await refused('PATCH', pool, { description: value }, 'description', pool);
        await refused(
          'PATCH',
          pool,
          { origins: [{ name: `node${value}Subject: forged`, address: '127.0.0.1:1' }] },
          'origins.0.name',
          pool,
        );
      }
      const pools = `${base}/load_balancers/pools`;
      const listed = ((await get(pools)) as unknown[]).length;
      const res = await f.call('POST', pools, {
        body: { name: 'p3', origins: [{ name: 'a\r\nBcc: x@example.com', address: '127.0.0.1:1' }] },
      });
      assert.equal(res.status, 400);
      assert.equal(((await get(pools)) as unknown[]).length, listed);
    });

    test('pools and monitors: header values (CR, LF, NUL, C1)', async () => {
      const pool = `${base}/load_balancers/pools/${ids.pool}`;
      const monitor = `${base}/load_balancers/monitors/${ids.monitor}`;
      for (const value of ['a\r\nX-Injected: 1', 'a\u0085b', 'a\u007fb']) {
        await refused(
          'PATCH',
          pool,
          { origins: [{ name: 'a', address: '127.0.0.1:1', header: { 'X-Test': [value] } }] },
          'origins.0.header.X-Test.0',
          pool,
        );
        await refused('PATCH', monitor, { header: { 'X-Test': [value] } }, 'header.X-Test.0', monitor);
      }
    });

    test('monitors: description and path', async () => {
      const monitor = `${base}/load_balancers/monitors/${ids.monitor}`;
      for (const value of bad) {
        await refused('PATCH', monitor, { description: value }, 'description', monitor);
        await refused('PUT', monitor, { path: `/health${value}` }, 'path', monitor);
      }
      const monitors = `${base}/load_balancers/monitors`;
      const listed = ((await get(monitors)) as unknown[]).length;
      const res = await f.call('POST', monitors, { body: { description: 'x\r\ny' } });
      assert.equal(res.status, 400);
      assert.equal(((await get(monitors)) as unknown[]).length, listed);
    });

    test('policies: name and description', async () => {
      const policy = `${base}/alerting/v3/policies/${ids.policy}`;
      for (const value of bad) {
        await refused('PUT', policy, { name: value }, 'name', policy);
        await refused('PUT', policy, { description: value }, 'description', policy);
      }
    });

    test('webhook destinations: name and secret (sent as a header value)', async () => {
      const destination = `${base}/alerting/v3/destinations/webhooks/${ids.destination}`;
      for (const value of bad) {
        await refused('PUT', destination, { name: value }, 'name', destination);
        await refused('PUT', destination, { name: 'hook', secret: `s${value}` }, 'secret', destination);
      }
      const destinations = `${base}/alerting/v3/destinations/webhooks`;
      const listed = ((await get(destinations)) as unknown[]).length;
      const res = await f.call('POST', destinations, { body: { name: 'a\nb', url: 'http://127.0.0.1:9/' } });
      assert.equal(res.status, 400);
      assert.equal(((await get(destinations)) as unknown[]).length, listed);
    });

    test('ordinary Unicode is fine', async () => {
      const res = await f.call('PATCH', `${base}/load_balancers/pools/${ids.pool}`, {
        body: { description: 'Ünïcödé — “quotes” ✓ 🚀' },
      });
      assert.equal(res.status, 200);
      assert.equal((res.body.result as { description: string }).description, 'Ünïcödé — “quotes” ✓ 🚀');
    });
  });
});
