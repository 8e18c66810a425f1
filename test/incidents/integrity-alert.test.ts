/**
 * `switchyard_origin_integrity_alert` (SPEC §18):
 *   - end to end: a whole Switchyard (verify: proofs) in front of a real anvil, its first pool a lying
 *     proxy, a webhook policy for the type: a balance lie → START naming the origin, its pool, the method
 *     and the block; once `verify_anchor.clear_after` passes without another failure (the injected clock
 *     jumps) → END with the same correlation id;
 *   - the clock rule alone (IntegrityIncidents on a real store, a manual clock): failures while it is open
 *     move its END; one incident per origin; none before clear_after.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { IntegrityIncidents } from '../../src/incidents/integrity.js';
import { openIncidents } from '../../src/incidents/queries.js';
import { createLogger } from '../../src/log.js';
import type { VerifyFailureReport } from '../../src/model/verify-failures.js';
import { insertPolicy } from '../../src/notifications/queries/alert-policies.js';
import { insertDestination } from '../../src/notifications/queries/destinations.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, waitFor } from '../helpers/devnet-chain.js';
import { rpc } from '../helpers/http.js';
import { type LyingOrigin, startLyingOrigin } from '../helpers/lying-origin.js';
import { openTestStore } from '../helpers/store.js';
import { GATEWAY_LIES } from '../helpers/verify-lies.js';
import { type Receiver, startReceiver } from '../notifications/helpers.js';

const TYPE = 'switchyard_origin_integrity_alert';
const CLEAR_AFTER_MS = 60_000;

interface Alert {
  alert_type: string;
  alert_event: string;
  alert_correlation_id: string;
  data: Record<string, unknown>;
}

describe('the integrity alert by webhook', () => {
  let node: AnvilNode;
  let liar: LyingOrigin;
  let receiver: Receiver;
  let app: TestApp;
  // Real time, moved forward at will (clear_after passes without waiting for it).
  let skew = 0;
  const clock = { now: () => Date.now() + skew, monotonic: () => performance.now() + skew };
  const alerts = () =>
    receiver.requests.map((request) => JSON.parse(request.body) as Alert).filter((alert) => alert.alert_type === TYPE);

  before(async () => {
    node = await startTestAnvil();
    await call(node.url, 'anvil_mine', ['0x3']);
    liar = await startLyingOrigin(node.url);
    receiver = await startReceiver();
    app = await startApp(
      {
        networks: {
          sepolia: {
            chain_id: 11155111,
            pools: ['lying', 'honest'],
            head_poll_interval: '50ms',
            verify: 'proofs',
            verify_anchor: { clear_after: `${CLEAR_AFTER_MS / 1000}s` },
          },
        },
        pools: [
          { name: 'lying', origins: [{ name: 'liar', address: liar.url }] },
          { name: 'honest', origins: [{ name: 'honest', address: node.url }] },
        ],
      },
      { clock },
    );
    const account = app.config.account_id;
    const destination = randomUUID();
    const at = new Date().toISOString();
    const target = { name: 'r', url: receiver.url, secret: null };
    await insertDestination(app.store.db, app.secrets, account, destination, target, at);
    const policy = {
      name: 'integrity',
      description: '',
      enabled: true,
      alert_type: TYPE,
      mechanisms: { webhooks: [{ id: destination }] },
      filters: {},
      alert_interval: null,
    };
    await insertPolicy(app.store.db, account, randomUUID(), policy, at);
    await waitFor(() => app.chain.trustedTip('sepolia')?.number === 3, 'block 3 trusted');
  });

  after(async () => {
    await app?.close();
    await liar?.close();
    await receiver?.close();
    await node?.stop();
  });

  it('START names origin, pool, method and block; END after clear_after without failures', async () => {
    liar.lie = GATEWAY_LIES.balance;
    const address = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
    const answer = await rpc(app.rpcUrl(), 'eth_getBalance', [address, 'latest']);
    assert.equal(answer.answer.result, await call(node.url, 'eth_getBalance', [address, 'latest']));
    await waitFor(() => alerts().length === 1, 'the START alert');
    const [start] = alerts() as [Alert];
    assert.equal(start.alert_event, 'ALERT_STATE_EVENT_START');
    assert.equal(start.data.network, 'sepolia');
    assert.deepEqual(start.data.origins, ['liar']);
    assert.equal(start.data.method, 'eth_getBalance');
    assert.equal(start.data.block_number, 3);
    assert.equal((start.data.pool_ids as string[]).length, 1);
    // Another failure while it is open is the same incident.
    await rpc(app.rpcUrl(), 'eth_getBalance', [address, 'latest']);
    liar.lie = undefined;
    skew += CLEAR_AFTER_MS;
    await waitFor(() => alerts().length === 2, 'the END alert');
    const end = alerts()[1] as Alert;
    assert.equal(end.alert_event, 'ALERT_STATE_EVENT_END');
    assert.equal(end.alert_correlation_id, start.alert_correlation_id);
    assert.deepEqual(end.data.origins, ['liar']);
  });
});

describe('the integrity alert’s clock', () => {
  const report = (origin: string): VerifyFailureReport => ({
    network: 'n',
    poolId: 'p1',
    origin,
    method: 'eth_getCode',
    block: 9,
    check: 'code',
    reason: 'made up',
  });

  it('one incident per origin; failures move its END; none before clear_after', async () => {
    const opened = await openTestStore();
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    const integrity = new IntegrityIncidents({
      chain: { trackedOrigins: () => [] },
      networks: { n: { verify_anchor: { origins: [], quorum: 2, clear_after: 1_000 } } },
      store: opened.store,
      clock,
      logger: createLogger({ level: 'silent' }),
      tickMs: 3_600_000,
    });
    try {
      await integrity.start();
      const open = async () => (await openIncidents(opened.store.db)).map((incident) => incident.data.origins?.[0]);
      integrity.failed(report('a'));
      integrity.failed(report('a'));
      integrity.failed(report('b'));
      await integrity.settled();
      assert.deepEqual((await open()).sort(), ['a', 'b']);
      clock.advance(600);
      integrity.failed(report('a'));
      clock.advance(400);
      integrity.check();
      await integrity.settled();
      assert.deepEqual(await open(), ['a'], 'b had no failure for clear_after; a had one 400 ms ago');
      clock.advance(599);
      integrity.check();
      await integrity.settled();
      assert.deepEqual(await open(), ['a']);
      clock.advance(1);
      integrity.check();
      await integrity.settled();
      assert.deepEqual(await open(), []);
    } finally {
      await integrity.stop();
      await opened.close();
    }
  });
});
