/**
 * Per-method rules (SPEC §17, `networks.{name}.methods.{name or namespace_*}`): the timeout of each
 * attempt, how many origins a call may try, and its hedging — each falling back to the gateway's
 * `request_timeout` and `max_attempts` and the network's `hedge`. An exact method name wins over a
 * `namespace_*` pattern, and a longer pattern over a shorter one. `hedge: off` turns the network's
 * hedging off for the method. `verify` (SPEC §18) replaces the network's `verify` for the method the same
 * way; an upstream batch never holds a call that is verified (the handler sends those one by one).
 *
 * Never hedged, whatever the rules say: writes, filter calls (they must reach their filter's origin) and
 * eth_subscribe / eth_unsubscribe (`mayHedge`, from the method table). An upstream batch (reads only,
 * no filter calls) takes the longest timeout, the fewest attempts and no hedging unless every call's
 * rule hedges like the network does (docs/routing.md). Resolved rules are cached per network and method
 * (at most MAX_CACHED methods per network; past that they are resolved on each call). A network with no
 * per-method rules and no hedging — the usual case — answers its own rules at once, and `verifies` says
 * whether any call of a network is under a verify mode, so the hot path skips per-call lookups for
 * networks that verify nothing.
 * The hedge delay: `after: p90` waits the origin's p90 latency once it has P90_SAMPLES (20) answered
 * attempts in its score window, and P90_FALLBACK_MS (250 ms) until then; a duration waits that long.
 */
import type { NetworkConfig } from '../../../config/schema.js';
import type { OriginScore } from '../../../model/origin-score.js';
import type { VerifyMode } from '../../rpc/forwarder.js';
import { STANDARD_METHODS } from '../../rpc/methods.js';

export interface HedgeRule {
  readonly after: 'p90' | number;
  readonly max: number;
}

export interface CallRules {
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly hedge: HedgeRule | undefined;
  /** How much of the answer is proven (SPEC §18). */
  readonly verify: VerifyMode;
}

export const P90_SAMPLES = 20;
export const P90_FALLBACK_MS = 250;
const MAX_CACHED = 512;

type NetworkRules = Pick<NetworkConfig, 'hedge' | 'methods'> & { verify: VerifyMode };

export class MethodRules {
  readonly #networks: Readonly<Record<string, NetworkRules>>;
  readonly #defaults: CallRules;
  readonly #cache = new Map<string, Map<string, CallRules>>();
  /** Networks with neither per-method rules nor hedging: every call has the network's own rules. */
  readonly #plain = new Map<string, CallRules>();
  /** Networks where some call is under a verify mode other than `off`. */
  readonly #verifying = new Set<string>();

  constructor(
    networks: Readonly<Record<string, Partial<NetworkRules>>> | undefined,
    defaults: { timeoutMs: number; maxAttempts: number },
  ) {
    const normal: Record<string, NetworkRules> = {};
    for (const [name, network] of Object.entries(networks ?? {})) {
      normal[name] = { hedge: network.hedge, methods: network.methods ?? {}, verify: network.verify ?? 'off' };
    }
    this.#networks = normal;
    this.#defaults = { ...defaults, hedge: undefined, verify: 'off' };
    for (const [name, network] of Object.entries(normal)) {
      const rules = Object.values(network.methods);
      if (rules.length === 0 && network.hedge === undefined) this.#plain.set(name, this.#network(name));
      if (network.verify !== 'off' || rules.some((rule) => rule.verify !== undefined && rule.verify !== 'off'))
        this.#verifying.add(name);
    }
  }

  /** Whether any call on `network` is under a verify mode other than `off` (its own, or a method's). */
  verifies(network: string): boolean {
    return this.#verifying.has(network);
  }

  /** The rules of one call of `method` on `network`. */
  forCall(network: string, method: string): CallRules {
    const plain = this.#plain.get(network);
    if (plain !== undefined) return plain;
    let methods = this.#cache.get(network);
    if (methods === undefined) {
      methods = new Map();
      this.#cache.set(network, methods);
    }
    const cached = methods.get(method);
    if (cached !== undefined) return cached;
    const rules = this.#resolve(network, method);
    if (methods.size < MAX_CACHED) methods.set(method, rules);
    return rules;
  }

  /** The rules of an upstream batch of these methods (see the header). */
  forBatch(network: string, methods: readonly string[]): CallRules {
    const plain = this.#plain.get(network);
    if (plain !== undefined && methods.length > 0) return plain.verify === 'off' ? plain : { ...plain, verify: 'off' };
    const base = this.#network(network);
    let timeoutMs = 0;
    let maxAttempts = Number.POSITIVE_INFINITY;
    let hedge = base.hedge;
    for (const method of methods) {
      const rules = this.forCall(network, method);
      timeoutMs = Math.max(timeoutMs, rules.timeoutMs);
      maxAttempts = Math.min(maxAttempts, rules.maxAttempts);
      if (rules.hedge !== base.hedge) hedge = undefined;
    }
    if (methods.length === 0) return base;
    return { timeoutMs, maxAttempts, hedge, verify: 'off' };
  }

  /** The network's own rules (no method override). */
  #network(network: string): CallRules {
    const hedge = this.#networks[network]?.hedge;
    const verify = this.#networks[network]?.verify ?? 'off';
    return hedge === undefined && verify === 'off' ? this.#defaults : { ...this.#defaults, hedge, verify };
  }

  #resolve(network: string, method: string): CallRules {
    const base = this.#network(network);
    const rule = matching(this.#networks[network]?.methods ?? {}, method);
    const hedgeable = mayHedge(method);
    if (rule === undefined) return hedgeable || base.hedge === undefined ? base : { ...base, hedge: undefined };
    return {
      timeoutMs: rule.timeout ?? base.timeoutMs,
      maxAttempts: rule.max_attempts ?? base.maxAttempts,
      hedge: !hedgeable || rule.hedge === 'off' ? undefined : (rule.hedge ?? base.hedge),
      verify: rule.verify ?? base.verify,
    };
  }
}

/** The rule of `method`: its exact entry, else the longest `namespace_*` pattern it matches. */
function matching(methods: NetworkRules['methods'], method: string): NetworkRules['methods'][string] | undefined {
  const exact = methods[method];
  if (exact !== undefined) return exact;
  let best: string | undefined;
  for (const pattern of Object.keys(methods)) {
    if (!pattern.endsWith('*')) continue;
    const prefix = pattern.slice(0, -1);
    if (method.startsWith(prefix) && (best === undefined || prefix.length > best.length - 1)) best = pattern;
  }
  return best === undefined ? undefined : methods[best];
}

/** Whether a call of `method` may ever be hedged: not a write, not a filter call, not a subscription. */
export function mayHedge(method: string): boolean {
  const spec = STANDARD_METHODS[method];
  if (spec?.write === true || spec?.filter !== undefined) return false;
  return method !== 'eth_subscribe' && method !== 'eth_unsubscribe';
}

/** How long a read waits for an answer from `score`'s origin before it is hedged. */
export function hedgeDelay(rule: HedgeRule, score: OriginScore | undefined): number {
  if (rule.after !== 'p90') return rule.after;
  if (score === undefined || score.p90_ms === null || score.answered < P90_SAMPLES) return P90_FALLBACK_MS;
  return score.p90_ms;
}
