/**
 * Chain-aware order: which origins a call tries first for what it needs, with a table of origin heads and
 * earliest blocks (a fake ChainView — the tracker itself is tested in chain/).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallNeeds, ChainView, OriginChainState } from '../chain/types.js';
import type { Pool } from '../model/pool.js';
import { mostAdvanced, orderByChain } from './chain-order.js';
import type { Candidate } from './router.js';
import { poolFromConfig } from './static-directory.js';

const NOW = '2026-01-01T00:00:00.000Z';
const pool: Pool = poolFromConfig(
  { name: 'p', origins: ['a', 'b', 'c', 'd'].map((name) => ({ name, address: `http://127.0.0.1:1/${name}` })) },
  '0123456789abcdef0123456789abcdef',
  NOW,
);
const candidates = (names: string): Candidate[] =>
  [...names].map((name) => ({ pool, origin: pool.origins.find((o) => o.name === name) as Pool['origins'][number] }));
const names = (plan: readonly Candidate[]): string => plan.map((c) => c.origin.name).join('');

function view(states: Record<string, Partial<OriginChainState>>, networkHead: number | undefined): ChainView {
  return {
    networkHead: () => networkHead,
    origin: (_pool, name) => {
      const state = states[name];
      return state === undefined
        ? undefined
        : { head: undefined, hash: undefined, earliest: 0, syncing: false, refused: false, ...state };
    },
    reportedHead: () => undefined,
    headCeiling: () => undefined,
  };
}

const HEAD: CallNeeds = { kind: 'head' };
const block = (from: number, to = from): CallNeeds => ({ kind: 'block', from, to });

describe('orderByChain', () => {
  const table: Array<{
    name: string;
    states: Record<string, Partial<OriginChainState>>;
    head?: number;
    needs: CallNeeds;
    lag?: number;
    plan: string;
    expect: string;
    eligible: number;
  }> = [
    {
      name: 'head: every origin at the head keeps the router order',
      states: { a: { head: 10 }, b: { head: 10 } },
      head: 10,
      needs: HEAD,
      plan: 'ab',
      expect: 'ab',
      eligible: 2,
    },
    {
      name: 'head: a lagging origin goes last',
      states: { a: { head: 9 }, b: { head: 10 }, c: { head: 10 } },
      head: 10,
      needs: HEAD,
      plan: 'abc',
      expect: 'bca',
      eligible: 2,
    },
    {
      name: 'head: an origin whose head claim was refused counts as lagging, even at the head',
      states: { a: { head: 10, refused: true }, b: { head: 10 }, c: { head: 8 } },
      head: 10,
      needs: HEAD,
      plan: 'abc',
      expect: 'bac',
      eligible: 1,
    },
    {
      name: 'head: max_head_lag lets a close origin stay',
      states: { a: { head: 9 }, b: { head: 10 } },
      head: 10,
      needs: HEAD,
      lag: 1,
      plan: 'ab',
      expect: 'ab',
      eligible: 2,
    },
    {
      name: 'head: unknown heads come after the head, laggards by head',
      states: { a: { head: 5 }, b: {}, c: { head: 8 }, d: { head: 10 } },
      head: 10,
      needs: HEAD,
      plan: 'abcd',
      expect: 'dbca',
      eligible: 1,
    },
    {
      name: 'head: no known network head changes nothing',
      states: { a: { head: 5 } },
      head: undefined,
      needs: HEAD,
      plan: 'ab',
      expect: 'ab',
      eligible: 2,
    },
    {
      name: 'block: only origins that have it, then the most advanced',
      states: { a: { head: 4 }, b: { head: 7 }, c: { head: 5 } },
      head: 7,
      needs: block(6),
      plan: 'abc',
      expect: 'bca',
      eligible: 1,
    },
    {
      name: 'block nobody has yet: most advanced first',
      states: { a: { head: 4 }, b: { head: 5 } },
      head: 5,
      needs: block(9),
      plan: 'ab',
      expect: 'ba',
      eligible: 0,
    },
    {
      name: 'block: pruned origins last',
      states: { a: { head: 10, earliest: 8 }, b: { head: 10 }, c: { head: 10, earliest: 3 } },
      head: 10,
      needs: block(2),
      plan: 'abc',
      expect: 'bca',
      eligible: 1,
    },
    {
      name: 'range: needs both ends',
      states: { a: { head: 10, earliest: 5 }, b: { head: 6 }, c: { head: 10 } },
      head: 10,
      needs: block(3, 9),
      plan: 'abc',
      expect: 'cba',
      eligible: 1,
    },
    {
      name: 'hash: unchanged',
      states: { a: { head: 1 }, b: { head: 10 } },
      head: 10,
      needs: { kind: 'hash' },
      plan: 'ab',
      expect: 'ab',
      eligible: 2,
    },
  ];
  for (const row of table) {
    it(row.name, () => {
      const ordered = orderByChain(candidates(row.plan), row.needs, view(row.states, row.head), 'n', row.lag ?? 0);
      assert.equal(names(ordered.plan), row.expect);
      assert.equal(ordered.eligible, row.eligible);
    });
  }

  it('returns the same array when every origin meets the need (no allocation on the usual path)', () => {
    const plan = candidates('ab');
    assert.equal(orderByChain(plan, HEAD, view({ a: { head: 3 }, b: { head: 3 } }, 3), 'n', 0).plan, plan);
  });
});

describe('mostAdvanced', () => {
  it('picks the highest head other than the origin that answered, if it is ahead', () => {
    const plan = candidates('abc');
    const chain = view({ a: { head: 5 }, b: { head: 9 }, c: { head: 7 } }, 9);
    assert.equal(mostAdvanced(plan, chain, plan[0] as Candidate, 5)?.origin.name, 'b');
    assert.equal(mostAdvanced(plan, chain, plan[1] as Candidate, 9), undefined);
  });
});
