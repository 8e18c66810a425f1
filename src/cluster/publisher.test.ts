import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChainTracker } from '../chain/tracker.js';
import type { BlockHead, ChainSource } from '../chain/types.js';
import { ManualClock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { LocalLeaseBackend } from '../limits/local-backend.js';
import { silentLogger } from '../log.js';
import type { HealthView } from '../model/health-view.js';
import type { Pool } from '../model/pool.js';
import { PoolSnapshot } from '../model/pool-snapshot.js';
import type { ControlMessage } from './messages.js';
import { StatePublisher } from './publisher.js';

const pool = {
  id: 'p1',
  account_id: 'acct',
  name: 'primary',
  enabled: true,
  minimum_origins: 1,
  origins: [{ name: 'a', address: 'http://127.0.0.1:1', enabled: true, weight: 1, header: {} }],
} as unknown as Pool;

const head: BlockHead = { number: 7, hash: `0x${'7'.repeat(64)}`, parentHash: '0x', timestamp: 7, header: {} };

function setup() {
  const clock = new ManualClock(0);
  const directory = new PoolSnapshot({ accountId: 'acct' });
  directory.replace([pool]);
  const reports: string[] = [];
  const healthy = new Map<string, boolean>();
  const health: HealthView = {
    originHealthy: (_pool, origin) => healthy.get(origin) ?? true,
    poolHealthy: () => [...healthy.values()].every(Boolean),
    reportFailure: (_pool, origin, reason, kind) => {
      reports.push(`${origin} failed ${kind} ${reason}`);
      healthy.set(origin, false);
    },
    reportSuccess: (_pool, origin) => reports.push(`${origin} ok`),
  };
  const source: ChainSource = { block: async () => head, syncing: async () => false };
  const networks = { sepolia: { pools: ['primary'], head_poll_interval: 1000 } };
  const chain = new ChainTracker({ networks, directory, health, source, clock });
  const sent: ControlMessage[] = [];
  const publisher = new StatePublisher({
    config: { networks, account_id: 'acct' } as unknown as Config,
    directory,
    health,
    chain,
    leases: new LocalLeaseBackend(clock),
    clock,
    logger: silentLogger,
    broadcast: (message) => sent.push(message),
  });
  return { publisher, directory, sent, reports, chain, clock };
}

/** Lets the publisher's check (queued with setImmediate) run. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

test('init carries the config, pools, health and chain state; pool changes are pushed at once', async () => {
  const { publisher, directory, sent } = setup();
  publisher.publishState('keys', { version: 1 });
  const init = publisher.init(2);
  assert.equal(init.t, 'init');
  if (init.t !== 'init') return;
  assert.equal(init.slot, 2);
  assert.deepEqual(
    init.pools.map((p) => p.name),
    ['primary'],
  );
  assert.deepEqual(init.health, { p1: { healthy: true, origins: { a: true } } });
  assert.deepEqual(init.chain.networks.sepolia?.tracked, [['p1', 'a', true, false]]);
  assert.deepEqual(init.states, { keys: { version: 1 } });
  publisher.start();
  directory.replace([{ ...pool, enabled: false }]);
  assert.equal(sent.find((m) => m.t === 'pools')?.t, 'pools');
  publisher.stop();
});

test("workers' failures reach the HealthView and the changed verdict is pushed on the next turn", async () => {
  const { publisher, sent, reports } = setup();
  publisher.handle(
    {
      t: 'health-reports',
      reports: [
        { pool: 'p1', origin: 'a', ok: true },
        { pool: 'p1', origin: 'a', ok: false, reason: 'refused', kind: 'connect' },
      ],
    },
    () => undefined,
  );
  assert.deepEqual(reports, ['a ok', 'a failed connect refused']);
  await turn();
  const pushed = sent.filter((m) => m.t === 'health');
  assert.equal(pushed.length, 1);
  assert.deepEqual(pushed[0]?.t === 'health' && pushed[0].health, { p1: { healthy: false, origins: { a: false } } });
  await turn();
  assert.equal(sent.filter((m) => m.t === 'health').length, 1, 'unchanged: not pushed again');
});

test('chain feedback reaches the tracker; block lookups and leases are answered by id', async () => {
  const { publisher, chain } = setup();
  publisher.handle(
    { t: 'chain-feedback', saw: [['p1', 'a', 12]], lacks: [], reported: [['sepolia', 11]], touched: [] },
    () => undefined,
  );
  assert.equal(chain.origin('p1', 'a')?.head, 12);
  assert.equal(chain.reportedHead('sepolia'), 11);
  const replies: ControlMessage[] = [];
  const answered = new Promise<void>((resolve) => {
    const reply = (message: ControlMessage): void => {
      replies.push(message);
      if (replies.length === 2) resolve();
    };
    publisher.handle({ t: 'request', id: 5, request: { kind: 'block', network: 'sepolia', which: 7 } }, reply);
    publisher.handle(
      {
        t: 'request',
        id: 6,
        request: { kind: 'lease', asks: [{ bucket: 'c', spec: { requests_per_second: 1, burst: 3 }, want: 5 }] },
      },
      reply,
    );
  });
  await answered;
  const byId = new Map(replies.map((m) => [m.t === 'reply' ? m.id : 0, m]));
  const block = byId.get(5);
  assert.ok(block?.t === 'reply' && block.ok && (block.value as BlockHead).number === 7);
  const lease = byId.get(6);
  assert.ok(lease?.t === 'reply' && lease.ok);
  assert.deepEqual(lease.value, [3]);
  chain.stop();
});

test('named reports from workers reach the handler of their topic', () => {
  const { publisher, chain } = setup();
  const got: unknown[] = [];
  publisher.onReport('key-usage', (payload) => got.push(payload));
  publisher.handle({ t: 'report', topic: 'key-usage', payload: { k1: 3 } }, () => undefined);
  publisher.handle({ t: 'report', topic: 'other', payload: 1 }, () => undefined);
  assert.deepEqual(got, [{ k1: 3 }]);
  chain.stop();
});

test("other accounts' pools are not sent to workers", () => {
  const { publisher, directory, chain } = setup();
  directory.replace([pool, { ...pool, id: 'p2', account_id: 'someone-else', name: 'theirs' }]);
  const init = publisher.init(1);
  assert.ok(init.t === 'init');
  assert.deepEqual(
    init.pools.map((p) => p.id),
    ['p1'],
  );
  assert.deepEqual(Object.keys(init.health), ['p1']);
  chain.stop();
});

test('a quota reserve without a quota backend in the control is answered with an error', async () => {
  const { publisher, chain } = setup();
  const reply = await new Promise<ControlMessage>((resolve) =>
    publisher.handle(
      { t: 'request', id: 9, request: { kind: 'quota', asks: [{ key: 'k', date: '2026-11-24', quota: 5, want: 1 }] } },
      resolve,
    ),
  );
  assert.ok(reply.t === 'reply' && !reply.ok && /no global quota backend/.test(reply.error));
  chain.stop();
});

test('a worker started later gets the relayed affinity entries that still count in its init', () => {
  const { publisher, sent, clock } = setup();
  const reply = () => {};
  const write = { kind: 'write', network: 'sepolia', client: 'k1', poolId: 'p1', origin: 'a', until: 60_000 } as const;
  const filter = { kind: 'filter', network: 'sepolia', id: '0x1', pool: 'p1', origin: 'b', until: 300_000 } as const;
  publisher.handle({ t: 'affinity', entry: write }, reply);
  publisher.handle({ t: 'affinity', entry: filter }, reply);
  // An older record of the same filter (another worker's, relayed late) does not replace the later one.
  publisher.handle({ t: 'affinity', entry: { ...filter, origin: 'c', until: 200_000 } }, reply);
  assert.equal(sent.filter((message) => message.t === 'affinity').length, 3, 'each relayed at once');
  const initOf = () => publisher.init(2) as Extract<ControlMessage, { t: 'init' }>;
  assert.deepEqual(initOf().affinity, [write, filter]);
  clock.advance(60_000);
  assert.deepEqual(initOf().affinity, [filter], 'the write entry no longer counts');
});
