/** Text a person reads: the plan table and the final summary of `switchyard migrate-notifications`. */
import type { MigrationResult } from './execute.js';
import { specLabel } from './legacy-filters.js';
import type { Plan } from './plan.js';

export function table(rows: string[][], indent = '  '): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows.map((row) =>
    (indent + row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')).trimEnd(),
  );
}

export function formatPlan(plan: Plan, context: { accountId: string; apiUrl: string; perPage: number }): string[] {
  const lines = [`Plan for account ${context.accountId} at ${context.apiUrl}`];
  const empty = plan.poolCount - plan.legacy.length;
  lines.push(
    `  Pools: ${plan.poolCount} listed, ${plan.legacy.length} with a legacy notification_email, ${empty} already empty.`,
  );
  if (plan.marked > 0) {
    lines.push(`  Policies from earlier runs of this command (marked switchyard-migration): ${plan.marked}.`);
  }
  if (plan.legacy.length === 0) {
    lines.push('  Nothing to migrate: every pool already has an empty notification_email.');
    return lines;
  }
  const count = (action: string): number => plan.policies.filter((p) => p.action === action).length;
  lines.push(
    '',
    `  Policies (${plan.policies.length}): ${count('create')} to create, ${count('update')} to update, ${count('keep')} already in place`,
  );
  const policyRows = [['#', 'action', 'recipients', 'alerts on (source → new health)', 'pools', 'note']];
  for (const [i, p] of plan.policies.entries()) {
    const note =
      p.existing === undefined ? '' : `${p.existing.id}${p.reasons.length > 0 ? `: ${p.reasons.join('; ')}` : ''}`;
    policyRows.push([String(i + 1), p.action, p.addresses.join(', '), specLabel(p.spec), String(p.pools.length), note]);
  }
  lines.push(...table(policyRows, '    '));

  const policyNumbers = new Map<string, number[]>();
  for (const [i, p] of plan.policies.entries()) {
    for (const pool of p.pools) policyNumbers.set(pool.id, [...(policyNumbers.get(pool.id) ?? []), i + 1]);
  }
  lines.push('', `  Pools with a legacy email (${plan.legacy.length}):`);
  const poolRows = [['pool', 'notification_email', 'policy']];
  for (const pool of plan.legacy) {
    const numbers = policyNumbers.get(pool.id);
    poolRows.push([
      pool.name,
      pool.addresses.join(', '),
      numbers === undefined ? '- (its notification_filter disables every alert: no policy needed)' : numbers.join(', '),
    ]);
  }
  lines.push(...table(poolRows, '    '));
  if (plan.duplicates.length > 0) {
    lines.push(
      '',
      `  Note: ${plan.duplicates.length} extra marked policies are left alone: ${plan.duplicates.map((p) => p.id).join(', ')}`,
    );
  }
  lines.push(
    '',
    `  Then: read every policy back, clear notification_email with the bulk PATCH page by page (${context.perPage} per page),`,
    '  only on pages whose pools are all covered, and re-list to prove every pool is empty.',
  );
  return lines;
}

export function formatSummary(result: MigrationResult, plan?: Plan): string[] {
  const lines = ['Summary'];
  const acted = result.created + result.updated + result.kept + result.verified + result.patches > 0;
  if (result.status === 'dry-run' && plan !== undefined) {
    const count = (action: string): number => plan.policies.filter((p) => p.action === action).length;
    lines.push(
      `  would create ${count('create')} and update ${count('update')} policies (${count('keep')} already in place), ` +
        `then clear notification_email on ${plan.legacy.length} pool(s)`,
    );
  } else if (acted || result.status === 'complete' || result.status === 'incomplete') {
    lines.push(
      `  policies: ${result.created} created, ${result.updated} updated, ${result.kept} already in place; ${result.verified} verified by reading back`,
    );
    lines.push(`  pools: ${result.cleared} cleared with ${result.patches} bulk PATCH request(s)`);
  }
  // Problems of earlier rounds that a later round resolved are still worth knowing about.
  for (const problem of result.problems)
    lines.push(`  ${result.status === 'complete' ? 'note' : 'problem'}: ${problem}`);
  const left = result.remaining.map((pool) => `${pool.name} (${pool.addresses.join(', ')})`);
  if (result.unchecked.length > 0) {
    lines.push(
      `  WARNING: a bulk PATCH also touched pools created or renamed during the run: ${result.unchecked.join(', ')}.`,
      '  Their legacy email may have been cleared without a policy: check their notifications by hand.',
    );
  }
  switch (result.status) {
    case 'complete':
      lines.push('  result: complete — every pool has an empty notification_email; no more deprecation emails');
      break;
    case 'nothing-to-do':
      lines.push('  result: nothing to do — every pool already has an empty notification_email');
      break;
    case 'dry-run':
      lines.push(`  result: dry run — nothing was changed; ${left.length} pool(s) would be migrated`);
      break;
    case 'cancelled':
      lines.push('  result: cancelled — nothing was changed');
      break;
    case 'running':
      lines.push('  result: stopped before finishing');
      break;
    default:
      lines.push(
        `  result: INCOMPLETE — ${left.length} pool(s) still have a legacy email: ${left.join(', ') || '(unknown)'}`,
      );
      lines.push('  Re-run the same command to finish; it reuses the policies created so far.');
  }
  return lines;
}
