/**
 * Lists of notification policies and webhook destinations return every object of the account by default
 * (up to 1000, with an honest result_info), because Cloudflare's own lists are single pages and the
 * official SDK's `for await` never asks for page 2: with 25 per page it stopped silently after 25. An
 * explicit per_page/page is still honoured; pools keep the seed's default of 25 per page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Cloudflare from 'cloudflare';
import { createToken } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/clock.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { testStoreLocation } from '../helpers/store.js';
import { type Receiver, startReceiver } from './helpers.js';

const POLICIES = 30;
const WEBHOOKS = 27;

let app: TestApp;
let receiver: Receiver;
let account: string;
let token: string;
let cf: Cloudflare;
let cleanup = (): void => {};

async function get(path: string): Promise<{ result: unknown[]; result_info: Record<string, number> }> {
  const response = await fetch(`${app.apiUrl}/accounts/${account}${path}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(response.status, 200);
  return (await response.json()) as { result: unknown[]; result_info: Record<string, number> };
}

before(async () => {
  const location = await testStoreLocation();
  cleanup = location.cleanup;
  app = await startApp(location.database_url ? { database_url: location.database_url } : {});
  account = app.config.account_id;
  token = (await createToken(app.store.db, systemClock, { accountId: account, readOnly: false })).token;
  cf = new Cloudflare({ apiToken: token, baseURL: app.apiUrl, maxRetries: 0 });
  receiver = await startReceiver();
  for (let i = 0; i < POLICIES; i++) {
    await cf.alerting.policies.create({
      account_id: account,
      name: `policy-${String(i).padStart(2, '0')}`,
      alert_type: 'load_balancing_health_alert',
      enabled: true,
      mechanisms: { email: [{ id: `ops${i}@example.com` }] },
    });
  }
  for (let i = 0; i < WEBHOOKS; i++) {
    await cf.alerting.destinations.webhooks.create({
      account_id: account,
      name: `hook-${String(i).padStart(2, '0')}`,
      url: `${receiver.url}/${i}`,
    });
  }
});

after(async () => {
  await app?.close();
  await receiver?.close();
  cleanup();
});

describe('list defaults of notification policies and webhook destinations', () => {
  test("the SDK's for await sees every policy and every destination", async () => {
    const policies: string[] = [];
    for await (const policy of cf.alerting.policies.list({ account_id: account })) policies.push(policy.name ?? '');
    assert.equal(policies.length, POLICIES);
    assert.equal(new Set(policies).size, POLICIES);

    const hooks: string[] = [];
    for await (const hook of cf.alerting.destinations.webhooks.list({ account_id: account })) {
      hooks.push(hook.name ?? '');
    }
    assert.equal(hooks.length, WEBHOOKS);
    assert.equal(new Set(hooks).size, WEBHOOKS);
  });

  test('the default page is every object, up to 1000, with an honest result_info', async () => {
    const policies = await get('/alerting/v3/policies');
    assert.equal(policies.result.length, POLICIES);
    assert.deepEqual(policies.result_info, {
      page: 1,
      per_page: 1000,
      count: POLICIES,
      total_count: POLICIES,
      total_pages: 1,
    });
    const hooks = await get('/alerting/v3/destinations/webhooks');
    assert.equal(hooks.result.length, WEBHOOKS);
    assert.equal(hooks.result_info.total_count, WEBHOOKS);
    assert.equal(hooks.result_info.per_page, 1000);
  });

  test('an explicit per_page/page or limit/offset is honoured', async () => {
    const second = await get('/alerting/v3/policies?per_page=10&page=2');
    assert.equal(second.result.length, 10);
    assert.deepEqual(second.result_info, { page: 2, per_page: 10, count: 10, total_count: POLICIES, total_pages: 3 });
    const tail = await get('/alerting/v3/destinations/webhooks?limit=5&offset=25');
    assert.equal(tail.result.length, WEBHOOKS - 25);
    const past = await get('/alerting/v3/policies?per_page=10&page=4');
    assert.deepEqual(past.result, []);
  });

  test('pools keep the default of 25 per page', async () => {
    const pools = await get('/load_balancers/pools');
    assert.equal(pools.result_info.per_page, 25);
  });
});
