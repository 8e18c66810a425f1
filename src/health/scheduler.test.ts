import assert from 'node:assert/strict';
import { afterEach, beforeEach, mock, test } from 'node:test';
import { JitteredScheduler } from './scheduler.js';

// Timers and Date are Node's mock timers: time moves only by tick(), so phases and spacing are exact.
beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'] }));
/** The scheduler's clock reads the mocked Date, so it moves with the mocked timers. */
const clock = { now: () => Date.now(), monotonic: () => Date.now() };
afterEach(() => mock.timers.reset());

/** Lets the tasks' promise chains (and the re-arming in their finally) run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

test('each key first fires at a random phase within its interval, then every interval ± jitter', async () => {
  const draws = [0.25, 0.75, 1, 0]; // phase a, phase b, then a's spacing (+10 %), b's spacing (−10 %)
  const scheduler = new JitteredScheduler({ random: () => draws.shift() ?? 0.5, clock });
  const fired: string[] = [];
  scheduler.set('a', 1000, async () => void fired.push('a'));
  scheduler.set('b', 1000, async () => void fired.push('b'));
  mock.timers.tick(249);
  await settle();
  assert.deepEqual(fired, [], 'nothing before the first phase');
  mock.timers.tick(1);
  await settle();
  assert.deepEqual(fired, ['a'], 'a at 250 ms');
  mock.timers.tick(500);
  await settle();
  assert.deepEqual(fired, ['a', 'b'], 'b at 750 ms: the two do not fire together');
  mock.timers.tick(599); // now 1349; a's next run: 250 + 1100 = 1350
  await settle();
  assert.deepEqual(fired, ['a', 'b'], 'b (750 + 900 = 1650) and a not yet');
  mock.timers.tick(1);
  await settle();
  assert.deepEqual(fired, ['a', 'b', 'a'], 'a after interval × 1.1');
  mock.timers.tick(300);
  await settle();
  assert.deepEqual(fired, ['a', 'b', 'a', 'b'], 'b after interval × 0.9');
  await scheduler.stop();
});

test('runs are spaced from start to start: the time a run takes does not stretch the interval', async () => {
  const scheduler = new JitteredScheduler({ random: () => 0.5, clock }); // phase half an interval, no jitter
  const starts: number[] = [];
  let release: (() => void) | undefined;
  scheduler.set('a', 100, async () => {
    starts.push(Date.now());
    await new Promise<void>((resolve) => {
      release = resolve;
    });
  });
  const t0 = Date.now();
  mock.timers.tick(50);
  await settle();
  mock.timers.tick(30); // the run takes 30 ms
  release?.();
  await settle();
  mock.timers.tick(69);
  await settle();
  assert.equal(starts.length, 1, 'not before 100 ms after the first start');
  mock.timers.tick(1);
  await settle();
  assert.deepEqual(
    starts.map((at) => at - t0),
    [50, 150],
    'the second run starts one interval after the first STARTED, not after it finished',
  );
  release?.();
  await scheduler.stop();
});

test('a run whose timer fired late is followed on the original schedule, not interval after its late start', async () => {
  let skew = 0; // how much later than its timers the scheduler's clock reads (a busy event loop)
  const scheduler = new JitteredScheduler({
    random: () => 0.5,
    clock: { now: () => Date.now(), monotonic: () => Date.now() + skew },
  });
  const starts: number[] = [];
  scheduler.set('a', 100, async () => void starts.push(Date.now()));
  const t0 = Date.now();
  mock.timers.tick(40);
  skew = 20; // the run due at 50 starts 20 late
  mock.timers.tick(10);
  await settle();
  mock.timers.tick(79);
  await settle();
  assert.equal(starts.length, 1);
  mock.timers.tick(1);
  await settle();
  assert.deepEqual(
    starts.map((at) => at - t0),
    [50, 130],
    'due at 150 on the late clock, one interval after the first was due (not 100 after it started late)',
  );
  await scheduler.stop();
});

test('a slow run delays only its own key, and runs of one key never overlap', async () => {
  const scheduler = new JitteredScheduler({ random: () => 0.5, clock }); // phase half an interval, no jitter
  let running = 0;
  let overlaps = 0;
  let release: (() => void) | undefined;
  let runs = 0;
  let others = 0;
  scheduler.set('slow', 100, async () => {
    runs += 1;
    running += 1;
    if (running > 1) overlaps += 1;
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    running -= 1;
  });
  scheduler.set('other', 100, async () => {
    others += 1;
  });
  mock.timers.tick(50);
  await settle();
  assert.equal(runs, 1);
  for (let i = 0; i < 10; i++) {
    mock.timers.tick(100); // the slow run is still going: no second run starts
    await settle();
  }
  assert.equal(runs, 1, 'no second run while the first is going');
  assert.equal(others, 11, 'the other key kept its interval');
  release?.();
  await settle();
  mock.timers.tick(0); // the run took longer than the interval: the next one follows at once
  await settle();
  assert.equal(runs, 2);
  assert.equal(overlaps, 0);
  release?.();
  await scheduler.stop();
});
