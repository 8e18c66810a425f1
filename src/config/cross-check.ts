/**
 * The config's cross-field rules, run after the schema on every part that passed it (parts.ts), each
 * broken rule reported as a problem with its path (nothing stops at the first):
 *   - gateway.listen and api.listen differ (port 0 excepted: each listener then gets its own port);
 *   - TLS files are readable (a wrong path names the key, not a bare ENOENT from deep in start-up);
 *   - the pools under `pools:` obey the routing account's `limits.*` as API pools do (api: accounts/
 *     limits.ts), have unique names and unique origin names, and their origins pass the account's
 *     outbound policy;
 *   - a network's `replacement` is another configured network and comes with `retired_on`, which is a
 *     real date; a network lists a pool once;
 *   - the devnet's network exists and lists the devnet pool.
 * Names that refer to a network get a "did you mean" (suggest.ts).
 */
import { accessSync, constants } from 'node:fs';
import { MONITOR_DEFAULTS } from '../model/monitor-schema.js';
import { originUrl } from '../model/origin-address.js';
import { poolProbeRate, RATE_EPSILON, shownRate } from '../model/probe-rate.js';
import { type OutboundPolicy, type TargetRules, WS_SCHEMES } from '../outbound/policy.js';
import { outboundPolicy } from './outbound.js';
import type { ConfigParts } from './parts.js';
import type { ConfigProblem } from './problems.js';
import type { Config } from './schema.js';
import { didYouMean } from './suggest.js';

type Report = (path: string, message: string) => void;

export function crossCheck(parts: ConfigParts): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const report: Report = (path, message) => problems.push({ code: 'CONFIG_INVALID', path, message });
  const { config, broken } = parts;
  if (!broken.has('gateway') && !broken.has('api')) checkListeners(config, report);
  checkTls(config, broken, report);
  if (!broken.has('limits')) checkConfigPoolLimits(parts, report);
  checkPools(parts, report);
  checkNetworks(parts, report);
  if (!broken.has('devnet') && !broken.has('networks')) checkDevnet(parts, report);
  return problems;
}

function checkListeners(config: Config, report: Report): void {
  // Port 0 (pick a free port, used by tests) gives each listener its own port, so equal strings are fine.
  if (config.gateway.listen === config.api.listen && !config.gateway.listen.endsWith(':0')) {
    report('gateway.listen', 'must differ from api.listen, so the management API is never on the RPC port');
  }
}

function checkTls(config: Config, broken: ReadonlySet<string>, report: Report): void {
  for (const listener of ['gateway', 'api'] as const) {
    const tls = config[listener].tls;
    if (tls === undefined || broken.has(listener)) continue;
    for (const key of ['cert_file', 'key_file'] as const) {
      try {
        accessSync(tls[key], constants.R_OK);
      } catch (err) {
        report(
          `${listener}.tls.${key}`,
          `cannot read "${tls[key]}" (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        );
      }
    }
  }
}

/**
 * The pools under `pools:` are the routing account's and obey its `limits.*` like pools made through the
 * API: a config that breaks one does not start, naming the key to raise. Pools the API added since are
 * not counted here (`config apply` checks them with the API's rules).
 */
function checkConfigPoolLimits(parts: ConfigParts, report: Report): void {
  const { config, poolIndexes } = parts;
  const { limits } = config;
  if (parts.poolNames.length > limits.max_pools_per_account) {
    report(
      'pools',
      `${parts.poolNames.length} pools are declared, more than limits.max_pools_per_account (${limits.max_pools_per_account})`,
    );
  }
  let rate = 0;
  for (const [n, pool] of config.pools.entries()) {
    if (pool.origins.length > limits.max_origins_per_pool) {
      report(
        `pools.${poolIndexes[n]}.origins`,
        `pool "${pool.name}" has ${pool.origins.length} origins, more than limits.max_origins_per_pool (${limits.max_origins_per_pool})`,
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
    report(
      'pools',
      `the monitors of the declared pools would probe ${shownRate(rate)} requests/s, over ` +
        `limits.probes_per_second ${shownRate(limits.probes_per_second)} by ${shownRate(rate - limits.probes_per_second)}; ` +
        "raise limits.probes_per_second or the monitors' interval",
    );
  }
}

function checkPools(parts: ConfigParts, report: Report): void {
  const { config, broken, poolIndexes } = parts;
  // Config pools belong to the routing account: the outbound policy of that account applies.
  const policyKnown = !broken.has('account_id') && !broken.has('outbound');
  const policy = outboundPolicy(config);
  const outbound = { policy, rules: policy.rulesFor(config.account_id) };
  const wsOutbound = { policy, rules: policy.rulesFor(config.account_id, { schemes: WS_SCHEMES }) };
  // Names are compared over every pool of the file, also those whose other settings failed.
  const seen = new Set<string>();
  for (const [i, name] of parts.poolNames.entries()) {
    if (name !== undefined && seen.has(name)) report(`pools.${i}.name`, `pool "${name}" is declared twice`);
    if (name !== undefined) seen.add(name);
  }
  for (const [n, pool] of config.pools.entries()) {
    const at = `pools.${poolIndexes[n]}`;
    const originNames = new Set<string>();
    for (const [j, origin] of pool.origins.entries()) {
      if (originNames.has(origin.name)) {
        report(`${at}.origins.${j}.name`, `origin "${origin.name}" appears twice in pool "${pool.name}"`);
      }
      originNames.add(origin.name);
      if (!policyKnown) continue;
      const refused = originRefusal(origin.address, outbound);
      if (refused !== undefined) report(`${at}.origins.${j}.address`, refused);
      const wsRefused = origin.ws_address === undefined ? undefined : originRefusal(origin.ws_address, wsOutbound);
      if (wsRefused !== undefined) report(`${at}.origins.${j}.ws_address`, wsRefused);
    }
  }
}

function checkNetworks(parts: ConfigParts, report: Report): void {
  const { config, networkNames } = parts;
  for (const [name, network] of Object.entries(config.networks)) {
    const at = `networks.${name}`;
    if (network.replacement !== undefined) {
      if (network.replacement === name) {
        report(`${at}.replacement`, 'a network cannot replace itself');
      } else if (!networkNames.includes(network.replacement)) {
        report(
          `${at}.replacement`,
          `"${network.replacement}" is not a configured network${didYouMean(network.replacement, networkNames)}`,
        );
      }
    }
    if (network.replacement !== undefined && network.retired_on === undefined) {
      report(at, 'replacement is set but retired_on is not; give the retirement date');
    }
    if (network.retired_on !== undefined && Number.isNaN(Date.parse(`${network.retired_on}T00:00:00Z`))) {
      report(`${at}.retired_on`, `"${network.retired_on}" is not a real date`);
    }
    if (new Set(network.pools).size !== network.pools.length) {
      report(`${at}.pools`, 'a pool is listed twice');
    }
  }
}

function checkDevnet(parts: ConfigParts, report: Report): void {
  const { config, networkNames } = parts;
  if (!config.devnet?.enabled) return;
  const name = config.devnet.network;
  const network = config.networks[name];
  if (!networkNames.includes(name)) {
    report('devnet.network', `"${name}" is not a configured network${didYouMean(name, networkNames)}`);
  } else if (network !== undefined && !network.pools.includes(config.devnet.pool)) {
    report('devnet.pool', `"${config.devnet.pool}" must be listed in networks.${name}.pools`);
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
