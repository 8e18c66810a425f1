/**
 * Scripted chains for chain-tracker unit tests: a FakeNode holds a chain from genesis (block n at index
 * n, each hash derived from its tag, number and parent, so branches that part stay apart), mines,
 * rewinds (a reorg's first half) and fails on demand; `fakeSource` answers the tracker's ChainSource
 * from the nodes by origin name and records what was asked.
 */
import { createHash } from 'node:crypto';
import type { BlockHead, ChainSource } from '../../src/chain/types.js';
import type { HealthView } from '../../src/model/health-view.js';
import type { Pool } from '../../src/model/pool.js';
import { poolFromConfig } from '../../src/routing/static-directory.js';

const ZERO = `0x${'0'.repeat(64)}`;

export function makeBlock(number: number, parentHash: string, tag: string): BlockHead {
  const hash = `0x${createHash('sha256').update(`${tag}:${number}:${parentHash}`).digest('hex')}`;
  const header = {
    number: `0x${number.toString(16)}`,
    hash,
    parentHash,
    timestamp: `0x${(1_700_000_000 + number * 12).toString(16)}`,
  };
  return { number, hash, parentHash, timestamp: 1_700_000_000 + number * 12, header };
}

export class FakeNode {
  blocks: BlockHead[] = [makeBlock(0, ZERO, 'genesis')];
  failing = false;
  syncing = false;
  /** Blocks behind the head that `finalized` answers; undefined = the tag is not supported. */
  finalityDepth: number | undefined = 2;

  get head(): BlockHead {
    return this.blocks[this.blocks.length - 1] as BlockHead;
  }

  mine(count = 1, tag = 'a'): this {
    for (let i = 0; i < count; i++) {
      const parent = this.head;
      this.blocks.push(makeBlock(parent.number + 1, parent.hash, tag));
    }
    return this;
  }

  /** Drops every block above `to`. */
  rewind(to: number): this {
    this.blocks = this.blocks.slice(0, to + 1);
    return this;
  }

  /** Takes another node's chain (same blocks, same hashes). */
  sync(other: FakeNode): this {
    this.blocks = [...other.blocks];
    return this;
  }

  at(number: number): BlockHead | undefined {
    return this.blocks[number];
  }
}

export interface FakeSource extends ChainSource {
  /** What was asked, as `${origin}:${which}`. */
  readonly asked: string[];
}

export function fakeSource(nodes: Readonly<Record<string, FakeNode>>): FakeSource {
  const asked: string[] = [];
  const node = (name: string): FakeNode => {
    const found = nodes[name];
    if (found === undefined) throw new Error(`no fake node ${name}`);
    if (found.failing) throw new Error(`${name} is down`);
    return found;
  };
  return {
    asked,
    async block(_pool, origin, which) {
      asked.push(`${origin.name}:${which}`);
      const n = node(origin.name);
      if (which === 'latest') return n.head;
      if (which === 'finalized') {
        return n.finalityDepth === undefined ? undefined : n.at(Math.max(0, n.head.number - n.finalityDepth));
      }
      return n.at(which);
    },
    async syncing(_pool, origin) {
      asked.push(`${origin.name}:syncing`);
      return node(origin.name).syncing;
    },
  };
}

/** A HealthView whose answers the test sets: everything healthy unless marked down. */
export class FakeHealth implements HealthView {
  readonly originsDown = new Set<string>();
  readonly poolsDown = new Set<string>();

  originHealthy(poolId: string, originName: string): boolean {
    return !this.originsDown.has(`${poolId}/${originName}`);
  }

  poolHealthy(poolId: string): boolean {
    return !this.poolsDown.has(poolId);
  }

  reportFailure(): void {}
}

/** A routing-account pool whose origins are named as given (addresses are placeholders). */
export function fakePool(
  name: string,
  origins: ReadonlyArray<string | { name: string; archive?: boolean; weight?: number; enabled?: boolean }>,
): Pool {
  const pool = poolFromConfig(
    {
      name,
      origins: origins.map((o) => {
        const spec = typeof o === 'string' ? { name: o } : o;
        return {
          name: spec.name,
          address: `http://${spec.name}.invalid:8545`,
          ...(spec.weight === undefined ? {} : { weight: spec.weight }),
          ...(spec.enabled === undefined ? {} : { enabled: spec.enabled }),
        };
      }),
    },
    'acc',
    '2024-01-01T00:00:00Z',
  );
  origins.forEach((o, i) => {
    if (typeof o !== 'string' && o.archive !== undefined)
      (pool.origins[i] as { archive?: boolean }).archive = o.archive;
  });
  return pool;
}
