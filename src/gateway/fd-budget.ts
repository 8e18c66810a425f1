/**
 * The gateway listener's share of the process's file descriptors (RLIMIT_NOFILE), decided once at
 * start. The gateway, the management API, the store and every outbound socket (origins, probes,
 * webhooks, SMTP) share one process: were the gateway's clients allowed every descriptor, an idle
 * connection flood would stop the API and the store too (accept and open fail with EMFILE).
 *
 *   reserve = max(64, ceil(10 % of the limit))
 *           + (connections_per_origin + 2 + 2 while any network keeps a ledger) × origin endpoints at start
 *   gateway.max_connections ≤ limit − reserve, and never below MIN_CONNECTIONS (16)
 *
 * The first term covers the process's own descriptors (stdio, the event loop, the store's files,
 * log and child pipes), the API listener and its clients, probes and deliveries; the second the
 * gateway's origin connections, the chain tracker's own 2 and the transaction ledger's 2 (an origin
 * endpoint is a scheme://host:port: origins sharing one share its connection pool). Origins added later
 * through the API are not counted: the reserve is a start-up estimate, as the limit itself is read once.
 * When the configured value does not fit, it is lowered and the caller logs a warning naming both
 * numbers. Node raises the soft limit to the hard one at start, so the soft limit read here is the one
 * in force.
 *
 * The limit is read from /proc/self/limits (Linux); where that file is missing or says "unlimited",
 * nothing is lowered.
 */
import { readFileSync } from 'node:fs';

/** The gateway keeps at least this many connections, even when the reserve does not fit (a warning says so). */
export const MIN_CONNECTIONS = 16;

/** The process's open-files limit (soft), or undefined when unknown or unlimited. */
export function openFilesLimit(limitsPath = '/proc/self/limits'): number | undefined {
  let text: string;
  try {
    text = readFileSync(limitsPath, 'utf8');
  } catch {
    return undefined;
  }
  const line = text.split('\n').find((l) => l.startsWith('Max open files'));
  const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
  if (soft === undefined || !/^\d+$/.test(soft)) return undefined;
  return Number(soft);
}

export interface ConnectionBudget {
  /** The listener's connection limit to use. */
  readonly maxConnections: number;
  /** Descriptors kept for everything else (see the header). */
  readonly reserve: number;
  /** The configured value did not fit and was lowered. */
  readonly lowered: boolean;
}

export function connectionBudget(options: {
  /** gateway.max_connections */
  configured: number;
  /** RLIMIT_NOFILE (soft); undefined: unknown, nothing is lowered. */
  fdLimit: number | undefined;
  /** connections_per_origin × origin endpoints. */
  originConnections: number;
}): ConnectionBudget {
  const { configured, fdLimit, originConnections } = options;
  if (fdLimit === undefined) return { maxConnections: configured, reserve: 0, lowered: false };
  const reserve = Math.max(64, Math.ceil(fdLimit / 10)) + originConnections;
  if (configured + reserve <= fdLimit) return { maxConnections: configured, reserve, lowered: false };
  return { maxConnections: Math.min(configured, Math.max(MIN_CONNECTIONS, fdLimit - reserve)), reserve, lowered: true };
}
