import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StreamSlots } from './stream-slots.js';

describe('StreamSlots', () => {
  it('gives each client max slots; a release goes to the oldest waiter; clients do not share slots', async () => {
    const slots = new StreamSlots(2);
    assert.equal(slots.take('a'), true);
    assert.equal(slots.take('a'), true);
    assert.equal(slots.take('a'), false);
    assert.equal(slots.take('b'), true, 'another client has its own slots');
    const order: string[] = [];
    const first = slots.queue('a');
    const second = slots.queue('a');
    assert.ok(first && second);
    void first.granted.then(() => order.push('first'));
    void second.granted.then(() => order.push('second'));
    slots.release('a');
    slots.release('a');
    await Promise.resolve();
    await Promise.resolve();
    assert.deepEqual(order, ['first', 'second']);
    assert.equal(slots.active('a'), 2, 'the waiters hold the released slots');
  });

  it('at most max answers wait per client; a cancelled waiter leaves the queue; emptied clients are forgotten', async () => {
    const slots = new StreamSlots(1);
    assert.equal(slots.take('a'), true);
    assert.equal(slots.take('a'), false);
    const waiting = slots.queue('a');
    assert.ok(waiting);
    assert.equal(slots.queue('a'), undefined, 'one more than max waiting is refused');
    waiting.cancel(new Error('timed out'));
    await assert.rejects(waiting.granted, /timed out/);
    slots.release('a');
    assert.equal(slots.active('a'), 0);
    assert.equal(slots.take('a'), true, 'the slot is free again');
  });

  it('resized: more slots go to waiting answers at once; fewer apply as streams end', async () => {
    const slots = new StreamSlots(1);
    assert.equal(slots.take('a'), true);
    assert.equal(slots.take('a'), false);
    const waiting = slots.queue('a');
    assert.ok(waiting);
    let granted = false;
    void waiting.granted.then(() => {
      granted = true;
    });
    slots.resize(2);
    await Promise.resolve();
    assert.equal(granted, true, 'the waiter got the new slot');
    assert.equal(slots.active('a'), 2);
    slots.resize(1);
    assert.equal(slots.take('a'), false, 'over the new max: no slot');
    const next = slots.queue('a');
    assert.ok(next);
    let nextGranted = false;
    void next.granted.then(() => {
      nextGranted = true;
    });
    slots.release('a');
    await Promise.resolve();
    assert.equal(nextGranted, false, 'a release above max is not handed on');
    assert.equal(slots.active('a'), 1);
    slots.release('a');
    await Promise.resolve();
    assert.equal(nextGranted, true, 'within max again: handed on');
  });
});
