/**
 * The newHeads source of one network: every `head` event of the chain tracker (src/chain/tracker.ts),
 * sent as geth's newHeads object. The tracker gives heads in order with no gap and no duplicate, back-fills
 * missed heads by number, and after a reorg gives the new branch's heads from the fork point on — so this
 * source only reshapes and fans out: no head at subscribe time (as geth), nothing on `reorg` itself.
 *
 * Shape: the header as the origin answered `eth_getBlockByNumber(…, false)` without the members geth's
 * newHeads does not carry (`transactions`, `uncles`, `size`, `totalDifficulty`, and the `withdrawals`
 * list — the header keeps `withdrawalsRoot`); the other members and their order are the origin's.
 */
import type { BlockHead } from '../../chain/types.js';
import type { Logger } from '../../log.js';
import { Fanout, type Source } from './fanout.js';

/** Block-body members eth_getBlockByNumber adds to the header fields; geth's newHeads sends the header alone. */
const NOT_IN_NEW_HEADS = new Set(['transactions', 'uncles', 'size', 'totalDifficulty', 'withdrawals']);

export function newHeadsJson(block: BlockHead): string {
  const shaped: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(block.header)) {
    if (!NOT_IN_NEW_HEADS.has(key)) shaped[key] = value;
  }
  return JSON.stringify(shaped);
}

export class HeadsSource implements Source {
  readonly fanout: Fanout;

  constructor(logger: Logger) {
    this.fanout = new Fanout(logger);
  }

  head(block: BlockHead): void {
    this.fanout.publish(newHeadsJson(block));
  }

  stop(): void {}
}
