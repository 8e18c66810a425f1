/**
 * Which networks the devnet leaves still while idle: with `devnet.block_time` 0 the leader mines a
 * block per transaction (leader-mining.ts), so a devnet nobody sends transactions to has a head that
 * does not move — the normal state of an offline demo, not a stalled chain. The incident detector
 * judges no head or finality stall there (incidents/detector.ts `onDemandHeads`); divergence and
 * reorgs are still watched. With `block_time` > 0 the head moves on its own and a stall is real.
 */
import type { Config } from '../config/schema.js';

export function devnetOnDemandHeads(config: Pick<Config, 'devnet'>): string[] {
  const devnet = config.devnet;
  return devnet?.enabled === true && devnet.block_time === 0 ? [devnet.network] : [];
}
