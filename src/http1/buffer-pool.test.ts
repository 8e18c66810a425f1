import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BufferPool, READ_BYTES } from './buffer-pool.js';

test('a released buffer is handed out again instead of a new one', () => {
  const buffers = new BufferPool();
  const first = buffers.take();
  assert.equal(first.length, READ_BYTES);
  buffers.release(first);
  const second = buffers.take();
  assert.equal(second.buffer, first.buffer);
  assert.deepEqual(buffers.stats, { created: 1, reused: 1, free: 0 });
});

test('a held view keeps its buffer out of reuse until it is released too', () => {
  const buffers = new BufferPool();
  const read = buffers.take();
  const kept = read.subarray(100, 200);
  buffers.hold(kept);
  buffers.release(read); // the read is parsed; `kept` still holds the bytes
  const other = buffers.take();
  assert.notEqual(other.buffer, read.buffer, 'bytes still held were handed out for another read');
  buffers.release(kept);
  assert.equal(buffers.take().buffer, read.buffer);
});

test('views of one read held separately free it only when the last is released', () => {
  const buffers = new BufferPool();
  const read = buffers.take();
  const a = read.subarray(0, 10);
  const b = read.subarray(10, 20);
  buffers.hold(a);
  buffers.hold(b);
  buffers.release(read);
  buffers.release(a);
  assert.equal(buffers.stats.free, 0);
  buffers.release(b);
  assert.equal(buffers.stats.free, 1);
});

test('a view counts once however often it is held or released; views made from it count not at all', () => {
  const buffers = new BufferPool();
  const read = buffers.take();
  const kept = read.subarray(0, 10);
  buffers.hold(kept);
  buffers.hold(kept);
  buffers.release(kept.subarray(1)); // not the held view
  buffers.release(kept);
  buffers.release(kept);
  assert.equal(buffers.stats.free, 0, 'the reader still holds its read');
  buffers.release(read);
  assert.equal(buffers.stats.free, 1);
  buffers.release(read);
  assert.equal(buffers.stats.free, 1, 'a second release of the same view freed the buffer twice');
});

test('buffers that did not come from take are never taken in', () => {
  const buffers = new BufferPool();
  const pooled = Buffer.from('a few bytes from Node’s shared pool');
  const own = Buffer.alloc(READ_BYTES);
  for (const view of [pooled, own]) {
    buffers.hold(view);
    buffers.release(view);
  }
  assert.equal(buffers.stats.free, 0);
});

test('at most 64 free buffers are kept; the others are left to the garbage collector', () => {
  const buffers = new BufferPool();
  const taken = Array.from({ length: 80 }, () => buffers.take());
  for (const view of taken) buffers.release(view);
  assert.equal(buffers.stats.free, 64);
});

test('copyOf copies bytes into a recycled buffer, held by the returned view', () => {
  const buffers = new BufferPool();
  const copy = buffers.copyOf(Buffer.from('origin bytes'));
  assert.equal(copy.toString(), 'origin bytes');
  assert.equal(buffers.take().buffer === copy.buffer, false, 'the copy was handed out while held');
  buffers.release(copy);
  assert.equal(buffers.take().buffer, copy.buffer);
});
