/**
 * The JSON-RPC shapes of locally executed calls: revert reasons worded as anvil words them (its answers
 * are the comparison in test/verify/execute.test.ts), other halts as geth's -32000.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { haltAnswer, revertAnswer, revertReason } from './call-answer.js';
import { dataBytes } from './encoding.js';

const word = (value: bigint) => value.toString(16).padStart(64, '0');
const errorString = (text: string) =>
  dataBytes(`0x08c379a0${word(32n)}${word(BigInt(text.length))}${Buffer.from(text).toString('hex').padEnd(64, '0')}`);

describe('call answers', () => {
  test('Error(string) and Panic(uint256) reasons are decoded; anything else keeps the bare message', () => {
    assert.equal(revertReason(errorString('nope')), 'nope');
    assert.equal(revertReason(dataBytes(`0x4e487b71${word(0x11n)}`)), 'panic: arithmetic underflow or overflow (0x11)');
    assert.equal(revertReason(dataBytes(`0x4e487b71${word(0x99n)}`)), 'panic: unknown code (0x99)');
    assert.equal(revertReason(dataBytes('0xdeadbeef')), undefined);
    assert.equal(
      revertReason(dataBytes(`0x08c379a0${word(4096n)}`)),
      undefined,
      'an offset past the data is no reason',
    );
    assert.deepEqual(revertAnswer(dataBytes('0x')), { error: { code: 3, message: 'execution reverted', data: '0x' } });
  });

  test('halts other than revert answer -32000 in geth words', () => {
    assert.deepEqual(haltAnswer('out of gas'), { error: { code: -32000, message: 'out of gas' } });
    assert.deepEqual(haltAnswer('invalid JUMP'), { error: { code: -32000, message: 'invalid jump destination' } });
  });
});
