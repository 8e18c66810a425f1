/**
 * The executor: list → plan → (confirm) → create/extend policies → read them back → clear
 * `notification_email` page by page → re-list, and again for what is left.
 *
 * Safety rules, in order of importance:
 * 1. A pool's email is cleared only when a policy that was read back from the server delivers every
 *    (address, event source, direction) its legacy email delivers today. Before each bulk PATCH the page
 *    is fetched again with the same `page`/`per_page`; if any pool on it has an email that is not covered
 *    (e.g. a pool created mid-run), that page is not patched and the run reports it.
 *    After the PATCH, the ids it returned are compared with the page that was checked; if the page
 *    shifted (pools created or renamed in between), clearing stops for this round and the run says so.
 * 2. Idempotent: policies carry a marker (policy-bodies.ts); a re-run extends them instead of duplicating.
 *    A POST that may have been applied (timeout, 5xx) is looked up by its marker before being retried.
 * 3. Bounded: at most `maxRounds` (default 3) rounds of plan → clear → re-list; pages are walked with
 *    the defensive pager (pages.ts), so a server that ignores pagination still terminates.
 * Pages with no legacy email are not patched, so a finished migration re-runs without writing anything.
 */

import { filterSpecs, normaliseAddresses, requiredTriples, specLabel } from './legacy-filters.js';
import { listAll, walkPages } from './pages.js';
import { buildPlan, type LegacyPool, legacyPools, type Plan, type PlannedPolicy, type PoolRecord } from './plan.js';
import {
  type ApiPolicy,
  type Coverage,
  coverageOf,
  isCovered,
  listMarkedPolicies,
  policyEmails,
  policyFilter,
  policyWebhooks,
} from './policy-bodies.js';
import type { V4Client } from './v4-client.js';
import { V4ApiError } from './v4-client.js';

export interface MigrationOptions {
  accountId: string;
  webhookId?: string;
  /** Page size for listing and for the bulk PATCH (both must use the same one so pages line up). */
  perPage: number;
  dryRun: boolean;
  maxRounds?: number;
}

export interface MigrationUi {
  /** One progress line for a person. */
  print(line: string): void;
  showPlan(plan: Plan): void;
  /** Asked once, before the first write. */
  confirm(plan: Plan): Promise<boolean>;
}

export interface MigrationResult {
  status: 'running' | 'complete' | 'nothing-to-do' | 'dry-run' | 'cancelled' | 'incomplete';
  created: number;
  updated: number;
  kept: number;
  verified: number;
  cleared: number;
  patches: number;
  /** Pools that still have a legacy email at the end (empty when complete). */
  remaining: LegacyPool[];
  problems: string[];
  /**
   * Pools a bulk PATCH returned that were not on the page checked just before it (created or renamed in
   * the instant between the check and the PATCH). Their email may have been cleared without a policy.
   */
  unchecked: string[];
}

export const DEFAULT_MAX_ROUNDS = 3;

export function emptyResult(): MigrationResult {
  return {
    status: 'running',
    created: 0,
    updated: 0,
    kept: 0,
    verified: 0,
    cleared: 0,
    patches: 0,
    remaining: [],
    problems: [],
    unchecked: [],
  };
}

/** Runs the migration; `result` is filled in as it goes, so a caller still has it if an API error is thrown. */
export async function runMigration(
  client: V4Client,
  options: MigrationOptions,
  ui: MigrationUi,
  result: MigrationResult = emptyResult(),
): Promise<MigrationResult> {
  const run = new Run(client, options, ui, result);
  await run.run();
  return result;
}

class Run {
  #client: V4Client;
  #options: MigrationOptions;
  #ui: MigrationUi;
  #result: MigrationResult;
  #poolsPath: string;
  #policiesPath: string;
  /** Policy ids per outcome, so later rounds do not count a policy twice. */
  #ids = {
    created: new Set<string>(),
    updated: new Set<string>(),
    kept: new Set<string>(),
    verified: new Set<string>(),
  };

  constructor(client: V4Client, options: MigrationOptions, ui: MigrationUi, result: MigrationResult) {
    this.#client = client;
    this.#options = options;
    this.#ui = ui;
    this.#result = result;
    this.#poolsPath = `/accounts/${options.accountId}/load_balancers/pools`;
    this.#policiesPath = `/accounts/${options.accountId}/alerting/v3/policies`;
  }

  async run(): Promise<void> {
    const result = this.#result;
    const maxRounds = this.#options.maxRounds ?? DEFAULT_MAX_ROUNDS;
    let pools = await this.#listPools();
    if (this.#options.webhookId !== undefined) await this.#checkWebhook(this.#options.webhookId);
    for (let round = 1; ; round++) {
      const plan = buildPlan(pools, await listMarkedPolicies(this.#client, this.#options.accountId), {
        webhookId: this.#options.webhookId,
      });
      if (round === 1) {
        this.#ui.showPlan(plan);
        if (plan.legacy.length === 0) {
          result.status = 'nothing-to-do';
          return;
        }
        if (this.#options.dryRun) {
          result.status = 'dry-run';
          result.remaining = plan.legacy;
          return;
        }
        if (!(await this.#ui.confirm(plan))) {
          result.status = 'cancelled';
          result.remaining = plan.legacy;
          return;
        }
      } else {
        this.#ui.print(`Round ${round}: ${plan.legacy.length} pool(s) still have a legacy email; planning again.`);
      }
      const policies = await this.#applyPolicies(plan);
      const coverages = await this.#verify(policies);
      await this.#clearPages(coverages);
      pools = await this.#listPools('Re-listing pools to check');
      const left = legacyPools(pools);
      result.remaining = left;
      if (left.length === 0) {
        result.status = 'complete';
        this.#ui.print('Every pool has an empty notification_email: the migration is complete.');
        return;
      }
      this.#ui.print(`${left.length} pool(s) still have a legacy email: ${left.map((p) => p.name).join(', ')}`);
      if (round >= maxRounds) {
        result.status = 'incomplete';
        return;
      }
    }
  }

  #count(outcome: 'created' | 'updated' | 'kept' | 'verified', id: string): void {
    this.#ids[outcome].add(id);
    const { created, updated, kept, verified } = this.#ids;
    this.#result.created = created.size;
    this.#result.updated = [...updated].filter((x) => !created.has(x)).length;
    this.#result.kept = [...kept].filter((x) => !created.has(x) && !updated.has(x)).length;
    this.#result.verified = verified.size;
  }

  async #listPools(what = 'Listing pools'): Promise<PoolRecord[]> {
    const perPage = this.#options.perPage;
    const { items, pages } = await listAll<PoolRecord>(
      (page) => this.#client.get(this.#poolsPath, { page, per_page: perPage }),
      'listing pools',
    );
    const legacy = items.filter((pool) => normaliseAddresses(pool.notification_email).length > 0).length;
    this.#ui.print(
      `${what} (${perPage} per page): ${items.length} pool(s) on ${pages} page(s), ${legacy} with a legacy notification_email.`,
    );
    return items;
  }

  async #checkWebhook(id: string): Promise<void> {
    const { result } = await this.#client.get<{ name?: unknown }>(
      `/accounts/${this.#options.accountId}/alerting/v3/destinations/webhooks/${encodeURIComponent(id)}`,
    );
    const name = typeof result?.name === 'string' ? ` (${result.name})` : '';
    this.#ui.print(`Webhook destination ${id}${name} found; it will be added to every policy.`);
  }

  /** Creates or updates what the plan says; returns planned policies with their ids. */
  async #applyPolicies(plan: Plan): Promise<Array<{ planned: PlannedPolicy; id: string }>> {
    const out: Array<{ planned: PlannedPolicy; id: string }> = [];
    const total = plan.policies.length;
    for (const [i, planned] of plan.policies.entries()) {
      const label = `Policy ${i + 1}/${total} (${planned.addresses.join(', ')}; ${specLabel(planned.spec)}; ${planned.pools.length} pool(s))`;
      if (planned.action === 'keep' && planned.existing !== undefined) {
        this.#count('kept', planned.existing.id);
        this.#ui.print(`${label}: already in place as ${planned.existing.id}`);
        out.push({ planned, id: planned.existing.id });
      } else if (planned.action === 'update' && planned.existing !== undefined) {
        await this.#client.put(`${this.#policiesPath}/${planned.existing.id}`, planned.body);
        this.#count('updated', planned.existing.id);
        this.#ui.print(`${label}: updated ${planned.existing.id} (${planned.reasons.join('; ')})`);
        out.push({ planned, id: planned.existing.id });
      } else {
        const id = await this.#create(planned);
        this.#count('created', id);
        this.#ui.print(`${label}: created ${id}`);
        out.push({ planned, id });
      }
    }
    return out;
  }

  async #create(planned: PlannedPolicy): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        const { result } = await this.#client.post<{ id?: unknown }>(this.#policiesPath, planned.body);
        if (typeof result?.id !== 'string') throw new V4ApiError('creating a policy: the answer has no policy id', {});
        return result.id;
      } catch (err) {
        if (!(err instanceof V4ApiError) || !err.maybeApplied || attempt >= 2) throw err;
        // The server may have created it before failing: look for our marker before trying again.
        const found = (await listMarkedPolicies(this.#client, this.#options.accountId)).byKey.get(planned.key);
        if (found !== undefined) return found.id;
        this.#ui.print(`Creating a policy failed (${err.message}); it was not created, trying once more.`);
      }
    }
  }

  /** Reads every policy back; only policies that match what was asked for count as coverage. */
  async #verify(policies: Array<{ planned: PlannedPolicy; id: string }>): Promise<Coverage[]> {
    const coverages: Coverage[] = [];
    for (const { planned, id } of policies) {
      const { result } = await this.#client.get<ApiPolicy>(`${this.#policiesPath}/${id}`);
      const policy: ApiPolicy = { ...(result ?? {}), id };
      const mismatches = mismatchesOf(planned, policy, this.#options.webhookId);
      const coverage = coverageOf(policy);
      if (mismatches.length > 0 || coverage === undefined) {
        const why = mismatches.length > 0 ? mismatches.join('; ') : 'it is disabled or not a health alert';
        this.#result.problems.push(`policy ${id} read back wrong (${why}); its pools were not cleared`);
        this.#ui.print(`Policy ${id}: read back does NOT match (${why}); its pools will keep their email.`);
        continue;
      }
      coverages.push(coverage);
      this.#count('verified', id);
    }
    this.#ui.print(`Verified ${coverages.length}/${policies.length} policies by reading them back.`);
    return coverages;
  }

  async #clearPages(coverages: readonly Coverage[]): Promise<void> {
    const perPage = this.#options.perPage;
    const pages = walkPages<PoolRecord>(
      (page) => this.#client.get(this.#poolsPath, { page, per_page: perPage }),
      'listing pools',
    );
    for await (const { page, items } of pages) {
      const where = `Page ${page} (${items[0]?.name ?? '?'} … ${items.at(-1)?.name ?? '?'})`;
      const legacy = items.filter((pool) => normaliseAddresses(pool.notification_email).length > 0);
      if (legacy.length === 0) {
        this.#ui.print(`${where}: no legacy email, nothing to clear`);
        continue;
      }
      const uncovered = legacy.filter((pool) => !coveredNow(pool, coverages));
      if (uncovered.length > 0) {
        const names = uncovered.map((pool) => `${pool.name ?? pool.id} (${pool.notification_email})`).join(', ');
        this.#result.problems.push(`page ${page} not cleared: not covered by a verified policy: ${names}`);
        this.#ui.print(
          `${where}: NOT cleared — ${uncovered.length} pool(s) not covered by a verified policy: ${names}`,
        );
        continue;
      }
      const { result } = await this.#client.patch<unknown>(
        this.#poolsPath,
        { notification_email: '' },
        { page, per_page: perPage },
      );
      this.#result.patches++;
      const checked = new Set(items.map((pool) => pool.id));
      const touched = Array.isArray(result)
        ? result.map((pool) => (pool as { id?: unknown })?.id).filter((id): id is string => typeof id === 'string')
        : [...checked];
      const unexpected = touched.filter((id) => !checked.has(id));
      const cleared = touched.filter((id) => legacy.some((pool) => pool.id === id)).length;
      this.#result.cleared += cleared;
      this.#ui.print(`${where}: ${legacy.length} pool(s) with a legacy email, all covered → cleared ${cleared}`);
      if (unexpected.length > 0) {
        // Pools were created or renamed between the check and the PATCH: pages no longer line up, and the
        // bulk PATCH may have cleared a pool nobody checked. The API offers no way to prevent this race;
        // the run stops clearing, names the pools, and exits non-zero so a person looks at them.
        const names = (result as Array<{ id?: unknown; name?: unknown }>)
          .filter((pool) => typeof pool?.id === 'string' && unexpected.includes(pool.id))
          .map((pool) => (typeof pool.name === 'string' ? `${pool.name} (${pool.id})` : String(pool.id)));
        this.#result.unchecked.push(...names);
        this.#result.problems.push(
          `page ${page} shifted under the bulk PATCH (pools created or renamed meanwhile); it also touched ` +
            `${names.join(', ')}, which were not checked — verify their notifications by hand`,
        );
        this.#ui.print(`${where}: the page shifted under the PATCH; stopping this round and re-listing.`);
        return;
      }
    }
  }
}

function coveredNow(pool: PoolRecord, coverages: readonly Coverage[]): boolean {
  const triples = requiredTriples(normaliseAddresses(pool.notification_email), filterSpecs(pool.notification_filter));
  return isCovered(pool.id, triples, coverages);
}

/** What the read-back policy lacks compared with the plan (empty = verified). */
function mismatchesOf(planned: PlannedPolicy, policy: ApiPolicy, webhookId: string | undefined): string[] {
  const out: string[] = [];
  const emails = policyEmails(policy);
  const missingEmails = planned.addresses.filter((address) => !emails.includes(address));
  if (missingEmails.length > 0) out.push(`email mechanisms lack ${missingEmails.join(', ')}`);
  if (webhookId !== undefined && !policyWebhooks(policy).includes(webhookId)) out.push(`webhook ${webhookId} missing`);
  const check = (name: string, needed: readonly string[]): void => {
    const actual = policyFilter(policy, name);
    if (actual === undefined) return; // absent filter matches everything
    const missing = needed.filter((value) => !actual.includes(value));
    if (missing.length > 0) out.push(`filters.${name} lacks ${missing.join(', ')}`);
  };
  check(
    'pool_id',
    planned.pools.map((pool) => pool.id),
  );
  check('new_health', planned.spec.new_health);
  check('event_source', planned.spec.event_source);
  return out;
}
