/**
 * The monitor-backed HealthView and the live health report: a refused connection ejects an origin at once,
 * timeouts only three in a row; with a monitor it returns only after a check that started later passed
 * (the scheduled round or the early confirmation probe); without one after the bounded passive ejection. Disabled origins are never healthy; a pool is healthy while minimum_origins are.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makePool, startHarness } from './harness.js';
import { TestOrigin } from './test-origin.js';

const monitor = { type: 'http' as const, timeout: 1, retries: 0, interval: 5 };

describe('monitor-backed HealthView', () => {
  let a: TestOrigin;
  let b: TestOrigin;
  before(async () => {
    a = await TestOrigin.start();
    b = await TestOrigin.start();
  });
  after(async () => {
    await a.down();
    await b.down();
  });

  it('ejects on a live failure and returns only when a later check passes', async () => {
    const pool = makePool('p', [
      { name: 'a', address: a.url },
      { name: 'b', address: b.url },
    ]);
    const h = await startHarness({ pools: [pool], monitors: { m1: monitor } });
    try {
      await h.monitor.runOnce();
      const view = h.monitor.view;
      assert.equal(view.originHealthy('p', 'a'), true);
      view.reportFailure('p', 'a', 'connection refused');
      assert.equal(view.originHealthy('p', 'a'), false, 'out of rotation at once');
      assert.equal(view.poolHealthy('p'), true, 'b still serves');
      h.clock.advance(60_000);
      assert.equal(view.originHealthy('p', 'a'), false, 'time alone does not bring it back');
      await a.down();
      await h.monitor.runOnce();
      assert.equal(view.originHealthy('p', 'a'), false, 'a failed check keeps it out');
      await a.up();
      h.clock.advance(5_000);
      await h.monitor.runOnce();
      assert.equal(view.originHealthy('p', 'a'), true, 'the monitor says it is back');
      // The API's view ignores this process's ejections: it is the monitors' state.
      view.reportFailure('p', 'b', 'timeout');
      assert.equal(h.monitor.originHealthy(pool, pool.origins[1]!), true);
    } finally {
      await h.close();
    }
  });

  it('timeouts eject only three in a row: one slow call among successes never does', async () => {
    const pool = makePool('st', [
      { name: 'a', address: a.url },
      { name: 'b', address: b.url },
    ]);
    const h = await startHarness({ pools: [pool], monitors: { m1: monitor } });
    try {
      await h.monitor.runOnce();
      const view = h.monitor.view;
      for (let i = 0; i < 10; i++) {
        view.reportFailure('st', 'a', 'no answer within 10000 ms', 'timeout');
        view.reportSuccess('st', 'a');
        view.reportFailure('st', 'a', 'connection failed (ECONNRESET)', 'network');
        view.reportSuccess('st', 'a');
      }
      assert.equal(view.originHealthy('st', 'a'), true, 'slow calls between successes keep it in rotation');
      view.reportFailure('st', 'a', 'no answer within 10000 ms', 'timeout');
      view.reportFailure('st', 'a', 'no answer within 10000 ms', 'timeout');
      assert.equal(view.originHealthy('st', 'a'), true, 'two strikes are not enough');
      h.clock.advance(30_001);
      view.reportFailure('st', 'a', 'no answer within 10000 ms', 'timeout');
      assert.equal(view.originHealthy('st', 'a'), true, 'strikes older than 30 s are forgotten');
      view.reportFailure('st', 'a', 'no answer within 10000 ms', 'timeout');
      view.reportFailure('st', 'a', 'no answer within 10000 ms', 'timeout');
      assert.equal(view.originHealthy('st', 'a'), false, 'three in a row eject it');
      assert.match(view.ejected('st', 'a') ?? '', /\(3 in a row\)$/);
      view.reportFailure('st', 'b', 'cannot connect (ECONNREFUSED)', 'connect');
      assert.equal(view.originHealthy('st', 'b'), false, 'a refused connection ejects at once');
    } finally {
      await h.close();
    }
  });

  it('an early confirmation probe brings an ejected origin back before the next scheduled check', async () => {
    const pool = makePool('cf', [
      { name: 'a', address: a.url },
      { name: 'b', address: b.url },
    ]);
    const h = await startHarness({ pools: [pool], monitors: { m1: monitor } });
    try {
      await h.monitor.runOnce();
      const view = h.monitor.view;
      a.requests = [];

      // A blip: the probe passes, the origin is back without waiting for the pool's interval.
      view.reportFailure('cf', 'a', 'cannot connect (ECONNREFUSED)', 'connect');
      assert.equal(view.originHealthy('cf', 'a'), false);
      await h.monitor.confirmEjections();
      assert.equal(a.requests.length, 1, 'the probe is the monitor check of that one origin');
      assert.equal(view.originHealthy('cf', 'a'), true, 'confirmed by the probe');
      assert.deepEqual(await h.events(), [], 'probes and ejections are not health events');

      // Really down: the probe fails and the origin stays out until a probe passes.
      view.reportFailure('cf', 'a', 'cannot connect (ECONNREFUSED)', 'connect');
      await a.down();
      await h.monitor.confirmEjections();
      assert.equal(view.originHealthy('cf', 'a'), false, 'a failed probe keeps it out');
      await a.up();
      await h.monitor.confirmEjections();
      assert.equal(view.originHealthy('cf', 'a'), true);

      // A failure reported while a probe runs: that probe cannot confirm the origin.
      view.reportFailure('cf', 'a', 'cannot connect (ECONNREFUSED)', 'connect');
      a.set({ delayMs: 200 });
      const probing = h.monitor.confirmEjections();
      view.reportFailure('cf', 'a', 'no answer within 10000 ms', 'timeout');
      await probing;
      a.set({});
      assert.equal(view.originHealthy('cf', 'a'), false, 'the failure came after the probe started');
      await h.monitor.confirmEjections();
      assert.equal(view.originHealthy('cf', 'a'), true);

      // The shared state wins: a passing probe does not bring back an origin the monitor holds Unhealthy.
      await a.down();
      h.clock.advance(5_000);
      await h.monitor.runOnce();
      view.reportFailure('cf', 'a', 'cannot connect (ECONNREFUSED)', 'connect');
      await a.up();
      await h.monitor.confirmEjections();
      assert.equal(view.originHealthy('cf', 'a'), false, 'Unhealthy until the monitor says otherwise');
      h.clock.advance(5_000);
      await h.monitor.runOnce();
      assert.equal(view.originHealthy('cf', 'a'), true);
    } finally {
      a.set({});
      await h.close();
    }
  });

  it('confirmation probes run on their own timer, about confirm_delay after the ejection', async () => {
    const pool = makePool('tm', [{ name: 'a', address: a.url }]);
    const h = await startHarness({ pools: [pool], monitors: { m1: monitor }, extra: { confirmDelayMs: 50 } });
    try {
      await h.monitor.runOnce();
      const view = h.monitor.view;
      view.reportFailure('tm', 'a', 'cannot connect (ECONNREFUSED)', 'connect');
      assert.equal(view.originHealthy('tm', 'a'), false);
      const deadline = Date.now() + 10_000;
      while (!view.originHealthy('tm', 'a')) {
        assert.ok(Date.now() < deadline, 'the timed probe did not bring the origin back within 10 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await h.close();
    }
  });

  it('without a monitor, ejection lasts passive_ejection and the pool fails over when all are out', async () => {
    a.requests = [];
    b.requests = [];
    const pool = makePool(
      'q',
      [
        { name: 'a', address: a.url },
        { name: 'b', address: b.url },
      ],
      { monitor: null },
    );
    const h = await startHarness({ pools: [pool], monitors: {}, extra: { passiveEjectionMs: 10_000 } });
    try {
      await h.monitor.runOnce();
      const view = h.monitor.view;
      view.reportFailure('q', 'a', 'connection refused');
      view.reportFailure('q', 'b', 'connection refused');
      assert.equal(view.poolHealthy('q'), false, 'every origin ejected: fail over to the next pool');
      h.clock.advance(9_999);
      assert.equal(view.originHealthy('q', 'a'), false);
      h.clock.advance(1);
      assert.equal(view.originHealthy('q', 'a'), true);
      assert.equal(view.poolHealthy('q'), true);
      assert.equal(a.requests.length + b.requests.length, 0, 'pools without a monitor are never probed');
      assert.deepEqual(await h.events(), [], 'live ejections are not health events');
    } finally {
      await h.close();
    }
  });

  it('never routes to disabled origins or pools; minimum_origins decides pool health', async () => {
    a.requests = [];
    const pool = makePool(
      'r',
      [
        { name: 'a', address: a.url, enabled: false },
        { name: 'b', address: b.url },
      ],
      { minimum_origins: 2 },
    );
    const disabledPool = makePool('s', [{ name: 'a', address: a.url }], { enabled: false });
    const h = await startHarness({ pools: [pool, disabledPool], monitors: { m1: monitor } });
    try {
      const events = await h.monitor.runOnce();
      assert.equal(a.requests.length, 0, 'disabled origins and pools are not probed');
      assert.equal(h.monitor.view.originHealthy('r', 'a'), false);
      assert.equal(h.monitor.view.originHealthy('r', 'b'), true);
      assert.equal(h.monitor.view.poolHealthy('r'), false, '1 healthy origin < minimum_origins 2');
      assert.equal(h.monitor.view.poolHealthy('s'), false);
      assert.deepEqual(
        events.map((e) => `${e.event_source} ${e.previous}->${e.new_health}: ${e.reason}`),
        ['pool Unknown->Unhealthy: 1 of 1 enabled origin healthy, fewer than minimum_origins 2'],
      );
    } finally {
      await h.close();
    }
  });

  it('reports live health in the Cloudflare shape', async () => {
    const pool = makePool('t', [
      { name: 'a', address: a.url },
      { name: 'b', address: `http://127.0.0.1:${b.port}/v3/0123456789abcdef0123456789abcdef` },
      { name: 'c', address: a.url, enabled: false },
    ]);
    const h = await startHarness({ pools: [pool], monitors: { m1: monitor } });
    try {
      await b.down();
      await h.monitor.runOnce();
      const report = await h.monitor.reportFromStore(pool);
      assert.equal(report.pool_id, 't');
      const checker = report.pop_health.switchyard;
      assert.ok(checker);
      assert.equal(checker.healthy, true);
      assert.equal(checker.origins.length, 3);
      const [first, second, third] = checker.origins;
      const aReport = first?.[a.url];
      assert.equal(aReport?.healthy, true);
      assert.equal(aReport?.failure_reason, 'No failures');
      assert.equal(aReport?.response_code, 200);
      assert.match(aReport?.rtt ?? '', /^\d+ms$/);
      assert.deepEqual(
        Object.keys(second ?? {}),
        [`http://127.0.0.1:${b.port}/v3/***`],
        'key-like path segments hidden',
      );
      assert.deepEqual(Object.values(second ?? {})[0], { healthy: false, failure_reason: 'connection refused' });
      assert.deepEqual(Object.values(third ?? {})[0], { healthy: false, failure_reason: 'origin disabled' });
      assert.equal(h.monitor.poolHealthy(pool), true);
      assert.equal(h.monitor.originHealthy(pool, pool.origins[1]!), false);
      assert.deepEqual(h.monitor.report(pool), report, 'the live copy agrees with the store');
    } finally {
      await b.up();
      await h.close();
    }
  });
});
