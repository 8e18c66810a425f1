/**
 * What the config check warns about (it does not fail a start):
 *   - a network naming a pool that is neither declared in the file (`pools:`, or the devnet's pool) nor
 *     in the store: the network would answer 503 for that pool until one of that name exists (often a
 *     typo: a "did you mean" names the closest pool of the file or the store);
 *   - a pool of the file that no network uses (the devnet's pool is always used).
 * `storePools` are the names of the routing account's pools in the store; serve knows them, and
 * `config check` reads them when it can reach the store.
 */
import type { ConfigParts } from './parts.js';
import type { ConfigWarning } from './problems.js';
import { didYouMean } from './suggest.js';

export function configWarnings(parts: ConfigParts, storePools: Iterable<string>): ConfigWarning[] {
  const { config } = parts;
  const declared = new Set(parts.poolNames.filter((name) => name !== undefined));
  if (config.devnet?.enabled) declared.add(config.devnet.pool);
  const stored = new Set(storePools);
  const known = [...new Set([...declared, ...stored])];
  const used = new Set<string>();
  const warnings: ConfigWarning[] = [];
  for (const [name, network] of Object.entries(config.networks)) {
    for (const [i, pool] of network.pools.entries()) {
      used.add(pool);
      if (declared.has(pool) || stored.has(pool)) continue;
      warnings.push({
        path: `networks.${name}.pools.${i}`,
        message: `pool "${pool}" is neither in the file nor in the store; the network answers 503 for it until one of that name exists${didYouMean(pool, known)}`,
      });
    }
  }
  // A network whose settings failed the schema may use any pool: no pool is called unused then.
  const unknownUse =
    parts.broken.has('networks') || parts.networkNames.some((network) => parts.broken.has(`networks.${network}`));
  if (unknownUse) return warnings;
  for (const [i, name] of parts.poolNames.entries()) {
    if (name === undefined || used.has(name)) continue;
    warnings.push({ path: `pools.${i}`, message: `pool "${name}" is not used by any network` });
  }
  return warnings;
}
