/** A pool origin (src/model/pool.ts) for an address, for tests that hand origins to the gateway's clients. */
import type { Origin } from '../../src/model/pool.js';

export function originOf(address: string, header: Record<string, string[]> = {}): Origin {
  return { name: 'o', address, enabled: true, weight: 1, header };
}
