/**
 * One outbound target policy (SPEC §8), built once from the config and passed to every part that
 * contacts an address on an account's behalf: under one config, gateway origins, monitor probes and
 * webhook deliveries refuse the same addresses. Two apps differ only in `outbound.trusted_accounts`:
 * with the default (the routing account trusted) all three reach a name that resolves to loopback; with
 * the routing account left out, all three refuse it at connect time ("target not allowed"). A real anvil
 * is the origin, a real node:http server the webhook receiver, DNS answers come from the test.
 *
 * The policy also cannot be left out: the constructors below fail to compile without it (typecheck).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock, systemClock } from '../../src/clock.js';
import { startGatewayWorkers } from '../../src/cluster/control.js';
import { buildConfig } from '../../src/config/load.js';
import { type GatewayOptions, serveGateway, startGateway } from '../../src/gateway/gateway.js';
import { HealthMonitor } from '../../src/health/monitor.js';
import { ProbeTransport } from '../../src/health/probes/transport.js';
import { silentLogger } from '../../src/log.js';
import { NotificationService } from '../../src/notifications/service.js';
import type { Resolver } from '../../src/outbound/policy.js';
import { StaticPoolDirectory } from '../../src/routing/static-directory.js';
import type { Store } from '../../src/store/database.js';
import { type ApiFixture, OTHER_ACCOUNT, startApiFixture } from '../api/setup.js';
import { type AnvilNode, startTestAnvil } from '../helpers/anvil.js';
import { rpc } from '../helpers/http.js';
import { insertEvent, insertWebhookPolicy, type Receiver, startReceiver, waitFor } from '../notifications/helpers.js';

/** Both names resolve to loopback: they pass every create-time check and are judged at connect time. */
const resolve: Resolver = async (hostname) => {
  if (hostname === 'origin.test' || hostname === 'hooks.test') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};

const REFUSED = /target not allowed: (origin|hooks)\.test resolves to 127\.0\.0\.1, a loopback address/;

interface Outcome {
  origin: string;
  probe: string;
  webhook: string;
}

/** One app under `outbound`: what a gateway call, a probe and a webhook delivery to loopback names give. */
async function outcomes(anvil: AnvilNode, receiver: Receiver, outbound: Record<string, unknown>): Promise<Outcome> {
  const port = new URL(anvil.url).port;
  const f = await startApiFixture(
    {
      outbound,
      networks: { sepolia: { chain_id: 11155111, pools: ['p'] } },
      pools: [{ name: 'p', origins: [{ name: 'o', address: `http://origin.test:${port}` }] }],
    },
    { resolve },
  );
  try {
    const call = await rpc(f.app.rpcUrl('sepolia'), 'eth_chainId');
    const origin = call.answer.error?.message ?? String(call.answer.result);
    return { origin, probe: await probeReason(f), webhook: await webhookOutcome(f, receiver) };
  } finally {
    await f.close();
  }
}

/** Puts a jsonrpc monitor on pool `p` and waits (bounded) for its first verdict on the origin. */
async function probeReason(f: ApiFixture): Promise<string> {
  const base = `/accounts/${f.accountId}/load_balancers`;
  const monitor = await f.call('POST', `${base}/monitors`, {
    body: { type: 'jsonrpc', interval: 1, timeout: 2, retries: 0 },
  });
  assert.equal(monitor.status, 200, JSON.stringify(monitor.body));
  const pools = (await f.call('GET', `${base}/pools`)).body.result as { id: string }[];
  const id = pools[0]?.id ?? '';
  const patched = await f.call('PATCH', `${base}/pools/${id}`, {
    body: { monitor: (monitor.body.result as { id: string }).id },
  });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  return waitFor(
    async () => {
      const res = await f.call('GET', `${base}/pools/${id}/health`);
      const pop = (res.body.result as { pop_health: Record<string, { origins: Record<string, Verdict>[] }> })
        .pop_health;
      const verdict = Object.values(pop).flatMap((region) => region.origins.flatMap((o) => Object.values(o)))[0];
      // Before the first check (or before the monitor is on) the reason says so; after it: the verdict.
      const reason = verdict?.failure_reason;
      if (reason === undefined || reason === 'not checked yet' || reason === 'pool has no monitor') return undefined;
      return reason;
    },
    "the probe's verdict",
    20_000,
  );
}

interface Verdict {
  failure_reason: string;
}

/** A health event of pool `p` alerting a webhook at hooks.test: 'sent', or why its delivery failed. */
async function webhookOutcome(f: ApiFixture, receiver: Receiver): Promise<string> {
  const store: Store = f.app.store;
  const account = f.accountId;
  const destination = await insertWebhookPolicy(store, f.app.secrets, account, {
    name: 'hook',
    url: `http://hooks.test:${receiver.port}/hook`,
  });
  const pool = await store.db.selectFrom('pools').select('id').where('name', '=', 'p').executeTakeFirstOrThrow();
  await insertEvent(store, { account_id: account, pool_id: pool.id, pool_name: 'p', new_health: 'Unhealthy' });
  return waitFor(
    async () => {
      const row = await store.db
        .selectFrom('notification_deliveries')
        .select(['status', 'last_error'])
        .where('mechanism', '=', destination)
        .executeTakeFirst();
      if (row === undefined) return undefined;
      if (row.status === 'sent') return 'sent';
      return row.last_error ?? undefined;
    },
    'the delivery',
    20_000,
  );
}

describe('one outbound policy for origins, probes and webhooks', () => {
  let anvil: AnvilNode;
  let receiver: Receiver;
  before(async () => {
    anvil = await startTestAnvil();
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await anvil.stop();
  });

  test('the routing account trusted (the default): all three reach the loopback names', async () => {
    const got = await outcomes(anvil, receiver, {});
    assert.deepEqual(got, { origin: '0xaa36a7', probe: 'No failures', webhook: 'sent' });
  });

  test('the routing account not trusted: all three refuse them, at connect time', async () => {
    const before = receiver.requests.length;
    const got = await outcomes(anvil, receiver, { trusted_accounts: [OTHER_ACCOUNT] });
    assert.match(got.origin, REFUSED, 'gateway origin');
    assert.match(got.probe, REFUSED, 'monitor probe');
    assert.match(got.webhook, REFUSED, 'webhook delivery');
    assert.equal(receiver.requests.length, before, 'no webhook reached the receiver');
  });

  test('the policy cannot be left out (these lines only compile with it: @ts-expect-error)', () => {
    const config = buildConfig({}, '(test)');
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    const directory = new StaticPoolDirectory([]);
    const store = undefined as unknown as Store;
    const health = undefined as unknown as GatewayOptions['health'];
    const gateway = {
      config,
      directory,
      health,
      storeReadiness: { storeReady: () => true },
      clock,
      logger: silentLogger,
    };
    // Closures that are type-checked, never run: each misses only `outbound`.
    const omitted = [
      // @ts-expect-error the gateway's origins need the policy
      () => startGateway(gateway),
      // @ts-expect-error so does a gateway over a given chain (a worker's)
      () => serveGateway({ ...gateway, chain: undefined as unknown as Parameters<typeof serveGateway>[0]['chain'] }),
      // @ts-expect-error and the workers' control process (its chain tracker)
      () => startGatewayWorkers(gateway),
      // @ts-expect-error monitor probes
      () => new HealthMonitor({ store, directory, routingAccountId: config.account_id, networks: {} }),
      // @ts-expect-error the probes' transport
      () => new ProbeTransport({ clock: systemClock }),
      // @ts-expect-error webhook deliveries
      () => new NotificationService({ store, config }),
    ];
    assert.equal(omitted.length, 6);
  });
});
