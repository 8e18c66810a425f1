/**
 * Passive ejection with workers: live failures reported by any worker reach the control process's
 * HealthView (the real one, health/view.ts), which ejects by its rules for all workers together; the
 * verdict comes back to every worker in the next health push.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChainTracker } from '../chain/tracker.js';
import type { ChainSource } from '../chain/types.js';
import { ManualClock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { LiveState } from '../health/live-state.js';
import { MonitoredHealthView } from '../health/view.js';
import { LocalLeaseBackend } from '../limits/local-backend.js';
import { silentLogger } from '../log.js';
import type { Pool } from '../model/pool.js';
import { PoolSnapshot } from '../model/pool-snapshot.js';
import { StatePublisher } from './publisher.js';
import { ReplicaHealthView } from './replica-health.js';

const pool = {
  id: 'p1',
  account_id: 'acct',
  name: 'primary',
  enabled: true,
  minimum_origins: 1,
  monitor: null,
  origins: ['a', 'b'].map((name, i) => ({
    name,
    address: `http://127.0.0.1:${i + 1}`,
    enabled: true,
    weight: 1,
    header: {},
  })),
} as unknown as Pool;

/** Lets the publisher's check (queued with setImmediate) run. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

function cluster() {
  const clock = new ManualClock(0);
  const directory = new PoolSnapshot({ accountId: 'acct' });
  directory.replace([pool]);
  const health = new MonitoredHealthView({ directory, live: new LiveState(), clock, passiveEjectionMs: 10_000 });
  const source: ChainSource = { block: async () => undefined, syncing: async () => false };
  const networks = { sepolia: { pools: ['primary'], head_poll_interval: 1000 } };
  const chain = new ChainTracker({ networks, directory, health, source, clock });
  const workers: ReplicaHealthView[] = [];
  const publisher = new StatePublisher({
    config: { networks, account_id: 'acct' } as unknown as Config,
    directory,
    health,
    chain,
    leases: new LocalLeaseBackend(clock),
    clock,
    logger: silentLogger,
    broadcast: (message) => {
      if (message.t === 'health') for (const worker of workers) worker.replace(message.health);
    },
  });
  const init = publisher.init(1);
  assert.ok(init.t === 'init');
  for (let i = 0; i < 2; i += 1) {
    workers.push(
      new ReplicaHealthView(directory, init.health, (reports) =>
        publisher.handle({ t: 'health-reports', reports }, () => undefined),
      ),
    );
  }
  return { workers: workers as [ReplicaHealthView, ReplicaHealthView], chain };
}

test("one worker's refused connection ejects the origin in every worker", async () => {
  const { workers, chain } = cluster();
  const [one, two] = workers;
  assert.equal(two.originHealthy('p1', 'a'), true);
  one.reportFailure('p1', 'a', 'connection refused', 'connect');
  one.flush();
  await turn();
  assert.equal(two.originHealthy('p1', 'a'), false);
  assert.equal(one.originHealthy('p1', 'a'), false);
  assert.equal(two.originHealthy('p1', 'b'), true);
  assert.equal(two.poolHealthy('p1'), true);
  chain.stop();
});

test('timeouts on different workers count as one run of strikes; a success in between resets it', async () => {
  const { workers, chain } = cluster();
  const [one, two] = workers;
  one.reportFailure('p1', 'a', 'timed out', 'timeout');
  one.flush();
  two.reportFailure('p1', 'a', 'timed out', 'timeout');
  two.flush();
  await turn();
  assert.equal(one.originHealthy('p1', 'a'), true, 'two strikes: still in');
  two.reportSuccess('p1', 'a');
  two.flush();
  one.reportFailure('p1', 'a', 'timed out', 'timeout');
  one.flush();
  await turn();
  assert.equal(one.originHealthy('p1', 'a'), true, 'the success reset the run');
  two.reportFailure('p1', 'a', 'timed out', 'timeout');
  two.flush();
  one.reportFailure('p1', 'a', 'timed out', 'timeout');
  one.flush();
  await turn();
  assert.equal(two.originHealthy('p1', 'a'), false, 'three in a row across workers eject');
  chain.stop();
});
