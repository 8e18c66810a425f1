import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../clock.js';
import { ControlLink } from './control-link.js';
import { ControlLeaseBuckets, IpcLeaseBackend, IpcQuotaBackend } from './lease-ipc.js';

const spec = { requests_per_second: 10, burst: 20 };

test('a new bucket grants up to its burst, then what refills, never more than it holds', async () => {
  const clock = new ManualClock(0);
  const buckets = new ControlLeaseBuckets(clock);
  assert.deepEqual(await buckets.lease([{ bucket: 'k', spec, want: 15 }]), [15]);
  assert.deepEqual(await buckets.lease([{ bucket: 'k', spec, want: 15 }]), [5]);
  assert.deepEqual(await buckets.lease([{ bucket: 'k', spec, want: 1 }]), [0]);
  clock.advance(250); // 2.5 tokens refilled: whole tokens only
  assert.deepEqual(await buckets.lease([{ bucket: 'k', spec, want: 5 }]), [2]);
  clock.advance(50); // the half token left plus 0.5
  assert.deepEqual(await buckets.lease([{ bucket: 'k', spec, want: 5 }]), [1]);
});

test('workers asking the same bucket share it: over 10 s, grants total limit × 10 s + burst', async () => {
  const clock = new ManualClock(0);
  const buckets = new ControlLeaseBuckets(clock);
  let granted = 0;
  // Two workers ask 3× the rate, in 50 ms steps.
  for (let t = 0; t < 10_000; t += 50) {
    clock.set(t);
    const [a, b] = await buckets.lease([
      { bucket: 'client', spec, want: 1 },
      { bucket: 'client', spec, want: 1 },
    ]);
    const [c] = await buckets.lease([{ bucket: 'client', spec, want: 1 }]);
    granted += (a ?? 0) + (b ?? 0) + (c ?? 0);
  }
  assert.ok(granted <= 10 * 10 + 20, `granted ${granted}`);
  assert.ok(granted >= 0.9 * (10 * 10 + 20), `granted ${granted}`);
});

test('buckets of different names and specs are separate; an idle bucket starts full again', async () => {
  const clock = new ManualClock(0);
  const buckets = new ControlLeaseBuckets(clock);
  const small = { requests_per_second: 1, burst: 1 };
  assert.deepEqual(
    await buckets.lease([
      { bucket: 'a', spec: small, want: 3 },
      { bucket: 'b', spec, want: 3 },
    ]),
    [1, 3],
  );
  clock.advance(61_000);
  assert.deepEqual(await buckets.lease([{ bucket: 'b', spec, want: 30 }]), [20]);
});

test('a worker leases over IPC from the control buckets; a failing control backend rejects (fail open)', async () => {
  const clock = new ManualClock(0);
  const control = new ControlLeaseBuckets(clock);
  let failing = false;
  const link: ControlLink = new ControlLink({
    send: (message) => {
      if (message.t !== 'request' || message.request.kind !== 'lease') return false;
      const { id, request } = message;
      const answer = failing ? Promise.reject(new Error('redis down')) : control.lease(request.asks);
      answer.then(
        (value) => link.settle({ t: 'reply', id, ok: true, value }),
        (err: Error) => link.settle({ t: 'reply', id, ok: false, error: err.message }),
      );
      return true;
    },
  });
  const backend = new IpcLeaseBackend(link);
  assert.deepEqual(
    await backend.lease([
      { bucket: 'k', spec, want: 12 },
      { bucket: 'k', spec, want: 12 },
    ]),
    [12, 8],
  );
  failing = true;
  await assert.rejects(backend.lease([{ bucket: 'k', spec, want: 1 }]), /redis down/);
  const gone = new IpcLeaseBackend(new ControlLink({ send: () => false }));
  await assert.rejects(gone.lease([{ bucket: 'k', spec, want: 1 }]), /gone/);
});

test('quota reserves go to the control the same way; without a backend there the request rejects', async () => {
  let answer: () => Promise<unknown> = async () => [4];
  const link: ControlLink = new ControlLink({
    send: (message) => {
      if (message.t !== 'request' || message.request.kind !== 'quota') return false;
      const { id } = message;
      answer().then(
        (value) => link.settle({ t: 'reply', id, ok: true, value }),
        (err: Error) => link.settle({ t: 'reply', id, ok: false, error: err.message }),
      );
      return true;
    },
  });
  const backend = new IpcQuotaBackend(link);
  const ask = { key: 'k', date: '2026-11-24', quota: 10, want: 4 };
  assert.deepEqual(await backend.reserve([ask]), [4]);
  answer = async () => [99];
  assert.deepEqual(await backend.reserve([ask]), [4], 'never more than wanted');
  answer = async () => {
    throw new Error('no global quota backend in the control process');
  };
  await assert.rejects(backend.reserve([ask]), /no global quota backend/);
});
