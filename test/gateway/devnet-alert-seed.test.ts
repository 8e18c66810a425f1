/**
 * Seeding of the devnet's demo alert policy (src/devnet/alert-policy.ts) against a real store: created
 * once with a fixed id per account, never overwritten (edits and `enabled: false` survive a restart),
 * recreated when deleted, nothing when `devnet.alert_email` is "". The end-to-end demo (kill an anvil,
 * see the .eml) is devnet-alert.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ensureAccount } from '../../src/accounts/accounts.js';
import { ManualClock } from '../../src/clock.js';
import { DEVNET_ALERT_POLICY_NAME, devnetAlertPolicyId, seedDevnetAlertPolicy } from '../../src/devnet/alert-policy.js';
import { silentLogger } from '../../src/log.js';
import { HEALTH_ALERT_TYPE } from '../../src/notifications/matching.js';
import { deletePolicy, getPolicy, listPolicies, updatePolicy } from '../../src/notifications/queries/alert-policies.js';
import type { Store } from '../../src/store/database.js';
import { openTestStore } from '../helpers/store.js';

const ACCOUNT = 'a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1';
const OTHER = 'b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2';
const clock = new ManualClock('2026-03-01T00:00:00Z');

describe('the devnet demo alert policy', () => {
  let store: Store;
  let close: () => Promise<void>;
  const seed = (email = 'operator@localhost', accountId = ACCOUNT) =>
    seedDevnetAlertPolicy({ store, clock, logger: silentLogger, accountId, email, pool: 'sepolia-devnet' });

  before(async () => {
    ({ store, close } = await openTestStore());
    await ensureAccount(store.db, clock, ACCOUNT, 'demo');
    await ensureAccount(store.db, clock, OTHER, 'other');
  });
  after(() => close?.());

  it('"" seeds nothing', async () => {
    assert.equal(await seed(''), undefined);
    assert.deepEqual(await listPolicies(store.db, ACCOUNT, 100, 0), []);
  });

  it('is an enabled health-alert policy emailing the address, for every pool of the account', async () => {
    const id = await seed();
    assert.equal(id, devnetAlertPolicyId(ACCOUNT));
    assert.match(id ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const policy = await getPolicy(store.db, ACCOUNT, id as string);
    assert.equal(policy?.name, DEVNET_ALERT_POLICY_NAME);
    assert.equal(policy?.enabled, true);
    assert.equal(policy?.alert_type, HEALTH_ALERT_TYPE);
    assert.deepEqual(policy?.mechanisms, { email: [{ id: 'operator@localhost' }] });
    assert.deepEqual(policy?.filters, {}, 'no filter: every pool, both sources, both health values');
  });

  it('is created once and never overwritten', async () => {
    const id = devnetAlertPolicyId(ACCOUNT);
    const current = await getPolicy(store.db, ACCOUNT, id);
    assert.ok(current);
    await updatePolicy(store.db, ACCOUNT, id, { ...current, name: 'renamed', enabled: false }, '2026-03-02T00:00:00Z');
    await seed('someone@example.com');
    const policies = await listPolicies(store.db, ACCOUNT, 100, 0);
    assert.equal(policies.length, 1);
    assert.equal(policies[0]?.name, 'renamed');
    assert.equal(policies[0]?.enabled, false);
    assert.deepEqual(policies[0]?.mechanisms, { email: [{ id: 'operator@localhost' }] });
  });

  it('comes back after it was deleted; each account gets its own', async () => {
    const id = devnetAlertPolicyId(ACCOUNT);
    assert.ok(await deletePolicy(store.db, ACCOUNT, id));
    assert.equal(await seed(), id);
    assert.equal((await listPolicies(store.db, ACCOUNT, 100, 0)).length, 1);
    const other = await seed('operator@localhost', OTHER);
    assert.notEqual(other, id);
    assert.equal((await listPolicies(store.db, OTHER, 100, 0)).length, 1);
  });

  it('two processes seeding at once create one policy', async () => {
    const id = devnetAlertPolicyId(ACCOUNT);
    await deletePolicy(store.db, ACCOUNT, id);
    const ids = await Promise.all([seed(), seed(), seed()]);
    assert.deepEqual(ids, [id, id, id]);
    assert.equal((await listPolicies(store.db, ACCOUNT, 100, 0)).length, 1);
  });
});
