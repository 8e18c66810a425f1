import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildConfig } from '../config/load.js';
import { createLogger } from '../log.js';
import { bound, StartUp } from './start-up.js';

test('unwind closes the listeners together first, then stops the rest in reverse order, past a failing stop', async () => {
  const lines: string[] = [];
  const s = new StartUp({
    config: buildConfig({}, '(test)'),
    logger: createLogger({ write: (line) => lines.push(line) }),
  });
  const order: string[] = [];
  let releaseApi: (() => void) | undefined;
  s.onStop(() => void order.push('store'));
  s.onStop(() => {
    throw new Error('devnet would not stop');
  });
  s.onStop(async () => void order.push('monitor'));
  s.onClose(async () => {
    order.push('gateway closing');
    await new Promise<void>((resolve) => {
      releaseApi = resolve;
    });
    order.push('gateway closed');
  });
  s.onClose(async () => {
    order.push('api closing');
    releaseApi?.();
  });
  await s.unwind();
  assert.deepEqual(order, ['gateway closing', 'api closing', 'gateway closed', 'monitor', 'store']);
  assert.equal(lines.length, 1);
  assert.match(lines[0] ?? '', /"msg":"error while stopping".*devnet would not stop/);
  await s.unwind();
  assert.equal(order.length, 5, 'each stop runs once');
});

test('a listener that cannot bind names its key and what to do, and keeps the cause', async () => {
  const inUse = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' });
  await assert.rejects(bound('gateway.listen', '127.0.0.1:8545', undefined, Promise.reject(inUse)), (err: Error) => {
    assert.match(
      err.message,
      /^gateway\.listen: 127\.0\.0\.1:8545 \(set by gateway\.listen\) is already in use by another process/,
    );
    assert.equal(err.cause, inUse);
    return true;
  });
  const other = new Error('something else');
  await assert.rejects(bound('api.listen', '127.0.0.1:8787', undefined, Promise.reject(other)), (err) => err === other);
});
