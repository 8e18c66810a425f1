/**
 * The outbound target policy (outbound/policy.ts) a config asks for: `outbound.trusted_accounts` may
 * reach loopback, private and CGNAT targets. Built once per process by its composition root (main.ts,
 * and each gateway worker) and passed to everything that contacts an address on an account's behalf —
 * gateway origins and the chain tracker, monitor probes, webhooks, the API's create-time checks — so all
 * of them refuse the same addresses. The config's own cross-checks (cross-check.ts) use the same rules.
 */
import { OutboundPolicy, type Resolver } from '../outbound/policy.js';
import type { Config } from './schema.js';

/** `resolve`: names to addresses (default: the system's DNS); tests inject answers. */
export function outboundPolicy(config: Pick<Config, 'outbound'>, resolve?: Resolver): OutboundPolicy {
  return new OutboundPolicy({
    trustedAccounts: config.outbound.trusted_accounts,
    ...(resolve === undefined ? {} : { resolve }),
  });
}
