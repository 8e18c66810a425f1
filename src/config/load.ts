import { accessSync, constants, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { SwitchyardError } from '../errors/base.js';
import { MONITOR_DEFAULTS } from '../model/monitor-schema.js';
import { originUrl } from '../model/origin-address.js';
import { poolProbeRate, RATE_EPSILON, shownRate } from '../model/probe-rate.js';
import { type OutboundPolicy, type TargetRules, WS_SCHEMES } from '../outbound/policy.js';
import { OFFLINE_DEFAULT_CONFIG } from './defaults.js';
import { expandEnv } from './env.js';
import { outboundPolicy } from './outbound.js';
import { type Config, configSchema } from './schema.js';

/**
 * The config pipeline, the only way a Config comes to be:
 *   read file → parse YAML → expand ${ENV} → strict schema (unknown keys are errors) → defaults
 *   → cross-field checks → deep freeze.
 * Every error names the file and the key.
 */
export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
}

/** Loads a config file; with no file, the built-in offline defaults (devnet + retired rinkeby). */
export function loadConfig(file: string | undefined, options: LoadOptions = {}): Readonly<Config> {
  if (file === undefined) return buildConfig(OFFLINE_DEFAULT_CONFIG, '(built-in defaults)');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new SwitchyardError('CONFIG_FILE_UNREADABLE', `cannot read config file ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (err) {
    throw new SwitchyardError('CONFIG_FILE_UNREADABLE', `${file} is not valid YAML: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return buildConfig(expandEnv(raw, options.env ?? process.env, file), file);
}

/** The pipeline after reading: schema, defaults, cross-checks, freeze. Exported for tests and embedders. */
export function buildConfig(raw: unknown, source: string): Readonly<Config> {
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) throw schemaError(parsed.error, source);
  crossCheck(parsed.data, source);
  return deepFreeze(parsed.data);
}

function schemaError(error: z.ZodError, source: string): SwitchyardError {
  const issue = error.issues[0];
  if (issue === undefined) return new SwitchyardError('CONFIG_INVALID', `${source}: invalid configuration`);
  const at = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => (at ? `${at}.${key}` : key));
    return new SwitchyardError(
      'CONFIG_UNKNOWN_KEY',
      `${source}: unknown key ${keys.map((k) => `"${k}"`).join(', ')}; see docs/configuration.md for the keys`,
    );
  }
  return new SwitchyardError('CONFIG_INVALID', `${source}: ${at || '(root)'}: ${issue.message}`, {
    details: error.issues,
  });
}

/**
 * The pools under `pools:` are the routing account's and obey its `limits.*` like pools made through the
 * API (api/limits.ts): a config that breaks one does not start, naming the key to raise. Seeding then
 * writes them without further checks; pools the API added since are not counted here.
 */
function checkConfigPoolLimits(config: Config, fail: (message: string) => never): void {
  const { limits } = config;
  if (config.pools.length > limits.max_pools_per_account) {
    fail(
      `pools: ${config.pools.length} pools are declared, more than limits.max_pools_per_account (${limits.max_pools_per_account})`,
    );
  }
  let rate = 0;
  for (const [i, pool] of config.pools.entries()) {
    if (pool.origins.length > limits.max_origins_per_pool) {
      fail(
        `pools.${i}.origins: pool "${pool.name}" has ${pool.origins.length} origins, more than limits.max_origins_per_pool (${limits.max_origins_per_pool})`,
      );
    }
    const monitor = pool.monitor;
    rate += poolProbeRate(
      {
        enabled: pool.enabled ?? true,
        monitored: monitor !== undefined,
        enabledOrigins: pool.origins.filter((origin) => origin.enabled ?? true).length,
      },
      {
        interval: monitor?.interval ?? MONITOR_DEFAULTS.interval,
        retries: monitor?.retries ?? MONITOR_DEFAULTS.retries,
      },
    );
  }
  if (rate > limits.probes_per_second + RATE_EPSILON) {
    fail(
      `pools: the monitors of the declared pools would probe ${shownRate(rate)} requests/s, over ` +
        `limits.probes_per_second ${shownRate(limits.probes_per_second)} by ${shownRate(rate - limits.probes_per_second)}; ` +
        "raise limits.probes_per_second or the monitors' interval",
    );
  }
}

function crossCheck(config: Config, source: string): void {
  const fail = (message: string): never => {
    throw new SwitchyardError('CONFIG_INVALID', `${source}: ${message}`);
  };
  // Port 0 (pick a free port, used by tests) gives each listener its own port, so equal strings are fine.
  if (config.gateway.listen === config.api.listen && !config.gateway.listen.endsWith(':0')) {
    fail('gateway.listen and api.listen must differ, so the management API is never on the RPC port');
  }
  // TLS files are read when the listeners start; a wrong path is a config error naming the key, not a
  // bare ENOENT from deep inside start-up.
  for (const listener of ['gateway', 'api'] as const) {
    const tls = config[listener].tls;
    for (const key of ['cert_file', 'key_file'] as const) {
      if (tls === undefined) continue;
      try {
        accessSync(tls[key], constants.R_OK);
      } catch (err) {
        fail(`${listener}.tls.${key}: cannot read "${tls[key]}" (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      }
    }
  }
  const policy = outboundPolicy(config);
  const outbound = { policy, rules: policy.rulesFor(config.account_id) };
  const wsOutbound = { policy, rules: policy.rulesFor(config.account_id, { schemes: WS_SCHEMES }) };
  checkConfigPoolLimits(config, fail);
  const poolNames = new Set<string>();
  for (const [i, pool] of config.pools.entries()) {
    if (poolNames.has(pool.name)) fail(`pools.${i}.name: pool "${pool.name}" is declared twice`);
    poolNames.add(pool.name);
    const originNames = new Set<string>();
    for (const [j, origin] of pool.origins.entries()) {
      if (originNames.has(origin.name)) {
        fail(`pools.${i}.origins.${j}.name: origin "${origin.name}" appears twice in pool "${pool.name}"`);
      }
      originNames.add(origin.name);
      // Config pools belong to the routing account: the outbound policy of that account applies.
      const refused = originRefusal(origin.address, outbound);
      if (refused !== undefined) fail(`pools.${i}.origins.${j}.address: ${refused}`);
      const wsRefused = origin.ws_address === undefined ? undefined : originRefusal(origin.ws_address, wsOutbound);
      if (wsRefused !== undefined) fail(`pools.${i}.origins.${j}.ws_address: ${wsRefused}`);
    }
  }
  for (const [name, network] of Object.entries(config.networks)) {
    if (network.replacement !== undefined) {
      const target = config.networks[network.replacement];
      if (target === undefined) {
        fail(`networks.${name}.replacement: "${network.replacement}" is not a configured network`);
      } else if (network.replacement === name) {
        fail(`networks.${name}.replacement: a network cannot replace itself`);
      }
    }
    if (network.replacement !== undefined && network.retired_on === undefined) {
      fail(`networks.${name}: replacement is set but retired_on is not; give the retirement date`);
    }
    if (network.retired_on !== undefined && Number.isNaN(Date.parse(`${network.retired_on}T00:00:00Z`))) {
      fail(`networks.${name}.retired_on: "${network.retired_on}" is not a real date`);
    }
    if (new Set(network.pools).size !== network.pools.length) {
      fail(`networks.${name}.pools: a pool is listed twice`);
    }
  }
  if (config.devnet?.enabled) {
    const network = config.networks[config.devnet.network];
    if (network === undefined) fail(`devnet.network: "${config.devnet.network}" is not a configured network`);
    else if (!network.pools.includes(config.devnet.pool)) {
      fail(`devnet.pool: "${config.devnet.pool}" must be listed in networks.${config.devnet.network}.pools`);
    }
  }
}

/**
 * Why the outbound policy refuses an origin address (or ws_address, with ws rules), or undefined
 * (unparseable addresses are the schema's).
 */
function originRefusal(address: string, outbound: { policy: OutboundPolicy; rules: TargetRules }): string | undefined {
  let url: URL;
  try {
    url = originUrl(address);
  } catch {
    return undefined;
  }
  return outbound.policy.refusal(url, outbound.rules);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
