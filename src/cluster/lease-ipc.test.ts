import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../clock.js';
import { LocalLeaseBackend } from '../limits/local-backend.js';
import { ControlLink } from './control-link.js';
import { IpcLeaseBackend, IpcQuotaBackend } from './lease-ipc.js';

const spec = { requests_per_second: 10, burst: 20 };

test('a worker leases over IPC from the control buckets; a failing control backend rejects (fail open)', async () => {
  const clock = new ManualClock(0);
  const control = new LocalLeaseBackend(clock);
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
  let answer: () => Promise<unknown> = async () => [{ granted: 4, left: 6 }];
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
  assert.deepEqual(await backend.reserve([ask]), [{ granted: 4, left: 6 }]);
  answer = async () => [{ granted: 99, left: 0 }];
  assert.deepEqual(await backend.reserve([ask]), [{ granted: 4, left: 0 }], 'never more than wanted');
  answer = async () => [4];
  assert.deepEqual(await backend.reserve([ask]), [{ granted: 0, left: 0 }], 'a garbled grant grants nothing');
  answer = async () => {
    throw new Error('no global quota backend in the control process');
  };
  await assert.rejects(backend.reserve([ask]), /no global quota backend/);
});
