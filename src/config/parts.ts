/**
 * The parts of a configuration the cross-checks and warnings look at. When the whole file passes the
 * schema that is all of it; when it does not, each top-level key, each network and each pool is parsed
 * on its own (`salvage`), so the checks still see every part that is valid and the check reports every
 * problem at once. A part that fails is left out (a top-level key takes its default) and named in
 * `broken`, so no check reports a consequence of a problem already reported.
 */
import type { z } from 'zod';
import { poolInput } from '../model/pool-input.js';
import {
  type Config,
  configObject,
  networkName,
  networkSchema,
  type PoolConfig,
  withDerivedDefaults,
} from './schema.js';

export interface ConfigParts {
  readonly config: Config;
  /** Paths of the parts that failed the schema: a top-level key, `networks.NAME` or `pools.N`. */
  readonly broken: ReadonlySet<string>;
  /** The file's index of each pool in `config.pools` (pools that failed are left out of the list). */
  readonly poolIndexes: readonly number[];
  /** Every network name the file declares, including those whose settings failed. */
  readonly networkNames: readonly string[];
  /** The name of each pool of the file, by its index (undefined where the name itself is not a string). */
  readonly poolNames: readonly (string | undefined)[];
}

/** A whole, valid config as parts. */
export function wholeParts(config: Config): ConfigParts {
  return {
    config,
    broken: new Set(),
    poolIndexes: config.pools.map((_, i) => i),
    networkNames: Object.keys(config.networks),
    poolNames: config.pools.map((pool) => pool.name),
  };
}

type Fields = z.output<typeof configObject>;
const SHAPE = configObject.shape;

/** The parts of `raw` that parse, each on its own (see the header). */
export function salvage(raw: unknown): ConfigParts {
  const tree = isRecord(raw) ? raw : {};
  const broken = new Set<string>();
  const fields: Record<string, unknown> = {};
  for (const key of Object.keys(SHAPE) as (keyof Fields)[]) {
    const parsed = SHAPE[key].safeParse(tree[key]);
    if (parsed.success) {
      fields[key] = parsed.data;
      continue;
    }
    broken.add(key);
    fields[key] = SHAPE[key].safeParse(undefined).data;
  }
  const networks = salvageNetworks(tree.networks, broken);
  const pools = salvagePools(tree.pools, broken);
  fields.networks = networks.parsed;
  fields.pools = pools.parsed.map((entry) => entry.pool);
  return {
    config: withDerivedDefaults(fields as Fields),
    broken,
    poolIndexes: pools.parsed.map((entry) => entry.index),
    networkNames: networks.names,
    poolNames: pools.names,
  };
}

function salvageNetworks(raw: unknown, broken: Set<string>) {
  const parsed: Record<string, z.output<typeof networkSchema>> = {};
  const names: string[] = [];
  if (!isRecord(raw)) return { parsed, names };
  for (const [name, value] of Object.entries(raw)) {
    names.push(name);
    const network = networkSchema.safeParse(value);
    if (network.success && networkName.safeParse(name).success) parsed[name] = network.data;
    else broken.add(`networks.${name}`);
  }
  return { parsed, names };
}

function salvagePools(raw: unknown, broken: Set<string>) {
  const parsed: { index: number; pool: PoolConfig }[] = [];
  const names: (string | undefined)[] = [];
  if (!Array.isArray(raw)) return { parsed, names };
  for (const [index, value] of raw.entries()) {
    names.push(isRecord(value) && typeof value.name === 'string' ? value.name : undefined);
    const pool = poolInput.safeParse(value);
    if (pool.success) parsed.push({ index, pool: pool.data });
    else broken.add(`pools.${index}`);
  }
  return { parsed, names };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
