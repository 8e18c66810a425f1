/**
 * Gateway keys as the gateway sees them (SPEC §11 "Gateway keys as resources"): the ports between the
 * keys' home (src/keys/, store-backed) and the gateway's hot path (gateway/http/key-auth.ts,
 * gateway/rpc/handler.ts), so neither imports the other.
 *
 * - `GatewayKeyTable`: the keys a process enforces, looked up synchronously by the SHA-256 digest of
 *   the presented value (hex) or by id. Only usable keys are in it: a disabled or deleted key is simply
 *   absent, so "absent" means 401.
 * - `KeyUsageSink`: where the gateway reports each counted call of a key (usage per day and network).
 * - `GatewayKeySnapshot`: the table as plain JSON, so another process (a gateway worker) can be handed
 *   the same table (`snapshotTable` / `GatewayKeySnapshot.keys` → `StaticKeyTable`).
 * The key's value itself never appears in any of these: only its digest.
 */
import { createHash } from 'node:crypto';

/** The stored and looked-up form of a key's value: SHA-256, lowercase hex. */
export function keyDigest(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** The UTC day (YYYY-MM-DD) of `now` (ms): what usage rows and daily quotas count by. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** A key's rate limit: the same shape as `gateway.rate_limit` with the burst default applied. */
export interface KeyRateLimit {
  readonly requests_per_second: number;
  readonly burst: number;
}

/** A key's rate limit as given (API, CLI), with the burst default of `gateway.rate_limit`: max(1, ceil(rate)). */
export function keyRateLimit(input: { requests_per_second: number; burst?: number | undefined }): KeyRateLimit {
  const rate = input.requests_per_second;
  return { requests_per_second: rate, burst: input.burst ?? Math.max(1, Math.ceil(rate)) };
}

/** One usable key, as enforced. */
export interface GatewayKeyRecord {
  /** 32 lowercase hex; the client identity (rate-limit bucket, quota, usage) of calls with this key. */
  readonly id: string;
  /** SHA-256 of the value, lowercase hex. */
  readonly digest: string;
  /** The networks it may call; null = all. */
  readonly networks: readonly string[] | null;
  /** Replaces `gateway.rate_limit` for its calls; null = `gateway.rate_limit` (if any) in its own bucket. */
  readonly rate_limit: KeyRateLimit | null;
  /** Calls per UTC day; null = no quota. */
  readonly daily_quota: number | null;
}

export interface GatewayKeyTable {
  /** The usable key whose value has this digest (SHA-256, lowercase hex). */
  lookup(digest: string): GatewayKeyRecord | undefined;
  /** The usable key with this id. */
  byId(id: string): GatewayKeyRecord | undefined;
  /** Called after each change of the table; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
  /** The whole table as plain JSON (what a worker process loads into its StaticKeyTable). */
  snapshot(): GatewayKeySnapshot;
}

export interface KeyUsageSink {
  /**
   * `calls` (default 1) counted calls of `keyId` on `network`; `ok` false when they were answered with a
   * JSON-RPC error.
   */
  count(keyId: string, network: string, ok: boolean, calls?: number): void;
}

/** The whole table as plain JSON (structured-clone and JSON safe). */
export interface GatewayKeySnapshot {
  /** Changes whenever the table does (opaque; compare for equality only). */
  readonly version: string;
  readonly keys: readonly GatewayKeyRecord[];
}

/** A fixed table (a worker's copy of a snapshot, or tests). `replace` swaps it whole. */
export class StaticKeyTable implements GatewayKeyTable {
  #byDigest = new Map<string, GatewayKeyRecord>();
  #byId = new Map<string, GatewayKeyRecord>();
  #version = '';
  readonly #listeners = new Set<() => void>();

  constructor(snapshot: GatewayKeySnapshot = { version: '', keys: [] }) {
    this.replace(snapshot);
  }

  lookup(digest: string): GatewayKeyRecord | undefined {
    return this.#byDigest.get(digest);
  }

  byId(id: string): GatewayKeyRecord | undefined {
    return this.#byId.get(id);
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  snapshot(): GatewayKeySnapshot {
    return { version: this.#version, keys: [...this.#byId.values()] };
  }

  /** Swaps in `snapshot` (readers never see half of it), then tells the listeners. */
  replace(snapshot: GatewayKeySnapshot): void {
    const frozen = snapshot.keys.map((key) =>
      Object.freeze({
        ...key,
        networks: key.networks === null ? null : Object.freeze([...key.networks]),
        rate_limit: key.rate_limit === null ? null : Object.freeze({ ...key.rate_limit }),
      }),
    );
    this.#byDigest = new Map(frozen.map((key) => [key.digest, key]));
    this.#byId = new Map(frozen.map((key) => [key.id, key]));
    this.#version = snapshot.version;
    for (const listener of this.#listeners) listener();
  }
}
