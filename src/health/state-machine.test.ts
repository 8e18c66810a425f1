import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextOriginCounters, type OriginCounters, poolStatus, type StateName } from './state-machine.js';

/** Runs a sequence of check outcomes (1 = pass, 0 = fail) and returns the status after each plus events. */
function run(sequence: string, up: number, down: number): { statuses: StateName[]; events: string[] } {
  let state: OriginCounters = { status: 'Unknown', failures: 0, successes: 0 };
  const statuses: StateName[] = [];
  const events: string[] = [];
  for (const char of sequence) {
    const step = nextOriginCounters(state, char === '1', { consecutive_up: up, consecutive_down: down });
    state = step.state;
    statuses.push(state.status);
    if (step.change?.event) events.push(`${step.change.previous}->${step.change.next}`);
  }
  return { statuses, events };
}

const H = 'Healthy';
const U = 'Unhealthy';
const N = 'Unknown';

describe('origin state machine', () => {
  const table: Array<{ name: string; seq: string; up: number; down: number; statuses: StateName[]; events: string[] }> =
    [
      { name: 'first state Healthy raises no event', seq: '11', up: 0, down: 0, statuses: [H, H], events: [] },
      {
        name: 'first state Unhealthy raises an event',
        seq: '0',
        up: 0,
        down: 0,
        statuses: [U],
        events: ['Unknown->Unhealthy'],
      },
      {
        name: '0 counts as 1 both ways',
        seq: '1010',
        up: 0,
        down: 0,
        statuses: [H, U, H, U],
        events: ['Healthy->Unhealthy', 'Unhealthy->Healthy', 'Healthy->Unhealthy'],
      },
      {
        name: 'consecutive_down 3 needs three failures in a row',
        seq: '1001000',
        up: 1,
        down: 3,
        statuses: [H, H, H, H, H, H, U],
        events: ['Healthy->Unhealthy'],
      },
      {
        name: 'consecutive_up 2 needs two passes in a row',
        seq: '0101011',
        up: 2,
        down: 1,
        statuses: [U, U, U, U, U, U, H],
        events: ['Unknown->Unhealthy', 'Unhealthy->Healthy'],
      },
      {
        name: 'flapping under thresholds never changes state',
        seq: '11010101010',
        up: 2,
        down: 2,
        statuses: [N, H, H, H, H, H, H, H, H, H, H],
        events: [],
      },
      { name: 'first state waits for its threshold', seq: '001', up: 1, down: 3, statuses: [N, N, H], events: [] },
    ];
  for (const row of table) {
    it(row.name, () => {
      const result = run(row.seq, row.up, row.down);
      assert.deepEqual(result.statuses, row.statuses);
      assert.deepEqual(result.events, row.events);
    });
  }
});

describe('pool status', () => {
  it('is Healthy while minimum_origins origins are Healthy', () => {
    assert.equal(poolStatus([H, U], 1), H);
    assert.equal(poolStatus([H, U], 2), U);
    assert.equal(poolStatus([H, N], 2), N);
    assert.equal(poolStatus([U, U], 1), U);
    assert.equal(poolStatus([], 1), U);
    assert.equal(poolStatus([U], 0), H);
  });
});
