import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { STREAM_CHUNK_BYTES, StreamChunks } from './stream-chunks.js';

describe('StreamChunks', () => {
  it('copies bytes into a buffer that is reused once recycled', () => {
    const chunks = new StreamChunks();
    const first = chunks.copy(Buffer.from('hello'));
    assert.equal(first.toString(), 'hello');
    assert.equal(chunks.free, 0);
    chunks.recycle(first);
    assert.equal(chunks.free, 1);
    const second = chunks.copy(Buffer.from('world!'));
    assert.equal(second.toString(), 'world!');
    assert.equal(second.buffer, first.buffer, 'the recycled memory is used again');
    assert.equal(chunks.free, 0);
  });

  it('ignores buffers it did not make, and a chunk given back twice is handed out once', () => {
    const chunks = new StreamChunks();
    chunks.recycle(Buffer.from('not ours'));
    chunks.recycle(Buffer.alloc(STREAM_CHUNK_BYTES));
    assert.equal(chunks.free, 0);
    const chunk = chunks.copy(Buffer.from('a'));
    chunks.recycle(chunk);
    chunks.recycle(chunk);
    assert.equal(chunks.free, 1);
    const a = chunks.copy(Buffer.from('a'));
    const b = chunks.copy(Buffer.from('b'));
    assert.notEqual(a.buffer, b.buffer, 'two live chunks never share memory');
  });

  it('keeps at most maxFree buffers; bytes beyond one read are copied into a plain buffer', () => {
    const chunks = new StreamChunks(2);
    const made = [1, 2, 3].map((n) => chunks.copy(Buffer.from([n])));
    for (const chunk of made) chunks.recycle(chunk);
    assert.equal(chunks.free, 2);
    const big = Buffer.alloc(STREAM_CHUNK_BYTES + 1, 7);
    const copy = chunks.copy(big);
    assert.ok(copy.equals(big));
    chunks.recycle(copy);
    assert.equal(chunks.free, 2);
  });
});
