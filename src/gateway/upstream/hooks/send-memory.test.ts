import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keccak256 } from 'viem';
import { ManualClock } from '../../../clock.js';
import type { Candidate } from '../../../routing/router.js';
import { transactionHash } from './eth-send-raw-transaction.js';
import { RESEND_MEMORY_MS, SendMemory } from './send-memory.js';

const origin = (pool: string, name: string) => ({ pool: { id: pool, name: pool }, origin: { name } }) as Candidate;

describe('the resend memory', () => {
  it('remembers an accepted send for 60 s, per network, with every origin that accepted it', () => {
    const clock = new ManualClock('2026-06-01T00:00:00Z');
    const memory = new SendMemory(clock);
    memory.accepted('mainnet', '0xaa', origin('p', 'first'));
    memory.accepted('mainnet', '0xaa', origin('q', 'second'));
    memory.accepted('mainnet', '0xaa', origin('p', 'first'));
    assert.equal(memory.get('mainnet', '0xaa')?.home.origin.name, 'first');
    assert.deepEqual(memory.get('mainnet', '0xaa')?.origins, ['p/first', 'q/second']);
    assert.equal(memory.get('sepolia', '0xaa'), undefined, 'per network');
    clock.advance(RESEND_MEMORY_MS - 1);
    assert.ok(memory.get('mainnet', '0xaa') !== undefined);
    clock.advance(1);
    assert.equal(memory.get('mainnet', '0xaa'), undefined, 'forgotten after 60 s');
  });

  it('holds at most its bound, the oldest forgotten first', () => {
    const memory = new SendMemory(new ManualClock(0), 2);
    for (const hash of ['0x01', '0x02', '0x03']) memory.accepted('n', hash, origin('p', 'o'));
    assert.equal(memory.get('n', '0x01'), undefined);
    assert.ok(memory.get('n', '0x02') !== undefined && memory.get('n', '0x03') !== undefined);
  });

  it("a transaction's hash is keccak-256 of its raw bytes (as viem computes it)", () => {
    const raw = `0x02f8${'ab'.repeat(60)}`;
    assert.equal(transactionHash(raw), keccak256(raw as `0x${string}`));
    assert.equal(transactionHash(raw.toUpperCase().replace('0X', '0x')), keccak256(raw as `0x${string}`));
  });
});
