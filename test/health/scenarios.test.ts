/**
 * Table-driven health scenarios against real local origins (node:http on port 0): which origin does what
 * at which check → the state after each check and the events recorded, with their reasons. Checks are
 * driven with `runOnce()`; nothing waits on intervals.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MonitorInput } from '../../src/model/monitor-schema.js';
import { describeEvent, makePool, startHarness } from './harness.js';
import { type OriginBehaviour, TestOrigin } from './test-origin.js';

type Step = Record<string, 'ok' | 'down' | 'hang' | Partial<OriginBehaviour>>;
type Short = 'H' | 'U' | '?';

interface Scenario {
  name: string;
  monitor: MonitorInput;
  origins: string[];
  minimum_origins?: number;
  steps: Step[];
  /** Per step, the state of each origin in `origins` order, e.g. "HU". */
  states: string[];
  events: string[];
  withReasons?: boolean;
}

const SHORT: Record<string, Short> = { Healthy: 'H', Unhealthy: 'U', Unknown: '?' };

const http: MonitorInput = { type: 'http', timeout: 1, retries: 0, interval: 5 };
const rpc: MonitorInput = { type: 'jsonrpc', timeout: 1, retries: 0, interval: 5 };

const SCENARIOS: Scenario[] = [
  {
    name: 'flapping below the thresholds changes nothing; three failures in a row do',
    monitor: { ...http, consecutive_down: 3, consecutive_up: 2 },
    origins: ['a', 'b'],
    steps: [{}, {}, { a: 'down' }, { a: 'ok' }, { a: 'down' }, { a: 'down' }, { a: 'down' }, { a: 'ok' }, { a: 'ok' }],
    states: ['??', 'HH', 'HH', 'HH', 'HH', 'HH', 'UH', 'UH', 'HH'],
    events: [
      'origin a Healthy->Unhealthy (connection refused)',
      'origin a Unhealthy->Healthy (2 consecutive checks passed)',
    ],
    withReasons: true,
  },
  {
    name: 'consecutive_down and consecutive_up of 0 count as 1; the pool follows minimum_origins',
    monitor: { ...http, consecutive_down: 0, consecutive_up: 0 },
    origins: ['a', 'b'],
    minimum_origins: 2,
    steps: [{}, { a: 'down' }, {}, { b: 'down' }],
    states: ['HH', 'UH', 'HH', 'HU'],
    events: [
      'origin a Healthy->Unhealthy',
      'pool p Healthy->Unhealthy',
      'origin a Unhealthy->Healthy',
      'pool p Unhealthy->Healthy',
      'origin b Healthy->Unhealthy',
      'pool p Healthy->Unhealthy',
    ],
  },
  {
    name: 'the first state raises an event only when it is Unhealthy',
    monitor: http,
    origins: ['a', 'b'],
    steps: [{ b: 'down' }, {}],
    states: ['HU', 'HH'],
    events: ['origin b Unknown->Unhealthy', 'origin b Unhealthy->Healthy'],
  },
  {
    name: 'all origins down: the pool goes Unhealthy with a reason that counts origins',
    monitor: http,
    origins: ['a', 'b'],
    steps: [{}, { a: 'down', b: 'down' }],
    states: ['HH', 'UU'],
    events: [
      'origin a Healthy->Unhealthy (connection refused)',
      'origin b Healthy->Unhealthy (connection refused)',
      'pool p Healthy->Unhealthy (0 of 2 enabled origins healthy, fewer than minimum_origins 1)',
    ],
    withReasons: true,
  },
  {
    name: 'a timeout is told apart from a refusal and retried',
    monitor: { ...http, retries: 1 },
    origins: ['a'],
    steps: [{}, { a: 'hang' }],
    states: ['H', 'U'],
    events: [
      'origin a Healthy->Unhealthy (timeout after 1 s (2 attempts))',
      'pool p Healthy->Unhealthy (0 of 1 enabled origin healthy, fewer than minimum_origins 1)',
    ],
    withReasons: true,
  },
  {
    name: '5xx fails against the default expected_codes; 2xx patterns match',
    monitor: { ...http, expected_codes: '2xx' },
    origins: ['a', 'b'],
    steps: [{ a: { status: 204 } }, { a: { status: 503 } }, { a: { status: 299 } }],
    states: ['HH', 'UH', 'HH'],
    events: ['origin a Healthy->Unhealthy (HTTP 503, expected 2xx)', 'origin a Unhealthy->Healthy (check passed)'],
    withReasons: true,
  },
  {
    name: 'expected_body is a case-insensitive substring',
    monitor: { ...http, expected_body: 'alive' },
    origins: ['a', 'b'],
    steps: [
      { a: { body: 'ALIVE and well' }, b: { body: 'alive' } },
      { a: { body: 'dead' }, b: { body: 'alive' } },
    ],
    states: ['HH', 'UH'],
    events: ['origin a Healthy->Unhealthy (response body does not contain "alive")'],
    withReasons: true,
  },
  {
    name: 'redirects fail unless follow_redirects',
    monitor: { ...http, path: '/health' },
    origins: ['a', 'b'],
    steps: [{ a: { location: '/moved' } }],
    states: ['UH'],
    events: ['origin a Unknown->Unhealthy (HTTP 302, expected 200)'],
    withReasons: true,
  },
  {
    name: 'redirects are followed with follow_redirects',
    monitor: { ...http, path: '/health', follow_redirects: true },
    origins: ['a'],
    steps: [{ a: { location: '/moved' } }],
    states: ['H'],
    events: [],
  },
  {
    name: 'jsonrpc: a wrong chain id fails with both ids in hex',
    monitor: rpc,
    origins: ['a', 'b'],
    steps: [{}, { a: { chainId: '0x1' } }],
    states: ['HH', 'UH'],
    events: ['origin a Healthy->Unhealthy (chain id 0x1, expected 0xaa36a7)'],
    withReasons: true,
  },
  {
    name: 'jsonrpc: a syncing node fails',
    monitor: rpc,
    origins: ['a', 'b'],
    steps: [{ a: { syncing: { startingBlock: '0x0', currentBlock: '0x10', highestBlock: '0x200' } } }, {}],
    states: ['UH', 'HH'],
    events: [
      'origin a Unknown->Unhealthy (syncing: block 0x10 of 0x200)',
      'origin a Unhealthy->Healthy (check passed)',
    ],
    withReasons: true,
  },
  {
    name: 'jsonrpc: more than max_block_lag behind the best origin fails, at the limit passes',
    monitor: { ...rpc, max_block_lag: 8 },
    origins: ['a', 'b'],
    steps: [
      { a: { block: 112n }, b: { block: 120n } },
      { a: { block: 111n }, b: { block: 120n } },
    ],
    states: ['HH', 'UH'],
    events: ["origin a Healthy->Unhealthy (block 0x6f is 9 behind the pool's best 0x78 (max_block_lag 8))"],
    withReasons: true,
  },
  {
    name: 'jsonrpc: a 5xx answer fails naming the method',
    monitor: rpc,
    origins: ['a', 'b'],
    steps: [{ a: { rpcStatus: 502 } }],
    states: ['UH'],
    events: ['origin a Unknown->Unhealthy (eth_chainId: HTTP 502)'],
    withReasons: true,
  },
];

describe('health scenarios (real local origins)', () => {
  const origins = new Map<string, TestOrigin>();

  before(async () => {
    for (const name of ['a', 'b']) origins.set(name, await TestOrigin.start());
  });
  after(async () => {
    for (const origin of origins.values()) await origin.down();
  });

  for (const scenario of SCENARIOS) {
    it(scenario.name, async () => {
      for (const origin of origins.values()) {
        origin.set({ block: 100n });
        await origin.up();
      }
      const pool = makePool(
        'p',
        scenario.origins.map((name) => ({ name, address: (origins.get(name) as TestOrigin).url })),
        { minimum_origins: scenario.minimum_origins ?? 1 },
      );
      const heard: string[] = [];
      const h = await startHarness({
        pools: [pool],
        monitors: { m1: scenario.monitor },
        extra: { onEvents: (events) => heard.push(...events.map((event) => event.id)) },
      });
      try {
        const states: string[] = [];
        for (const step of scenario.steps) {
          for (const name of scenario.origins) {
            const origin = origins.get(name) as TestOrigin;
            const what = step[name] ?? 'ok';
            if (what === 'down') await origin.down();
            else {
              await origin.up();
              origin.set(what === 'hang' ? { hang: true } : what === 'ok' ? {} : what);
              if (what !== 'hang' && typeof what === 'object' && what.block === undefined)
                origin.behaviour.block = 100n;
            }
          }
          h.clock.advance(5_000);
          await h.monitor.runOnce();
          states.push(
            scenario.origins.map((name) => SHORT[h.monitor.live.origin('p', name)?.status ?? 'Unknown']).join(''),
          );
        }
        assert.deepEqual(states, scenario.states, 'states after each check');
        const events = (await h.events()).map((event) => describeEvent(event, scenario.withReasons));
        assert.deepEqual(events, scenario.events, 'events');
        assert.deepEqual(
          heard,
          (await h.events()).map((event) => event.id),
          'onEvents hears every recorded event once, in order (the notification nudge)',
        );
      } finally {
        await h.close();
      }
    });
  }
});
