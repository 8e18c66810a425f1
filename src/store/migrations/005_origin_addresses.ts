import { type Kysely, sql } from 'kysely';
import { AddressError, maskAddress, normaliseAddress, originTarget } from '../../model/origin-address.js';
import type { Dialect } from '../database.js';

/**
 * Origin addresses in their canonical form (model/origin-address.ts). Older versions accepted an
 * address without a scheme that carried userinfo, a path or a query (`user:pw@host:port/v3/KEY?k=v`) as a
 * "bare host", and stored URLs as written. The gateway always read such an address as `http://` + it
 * (WHATWG URL, fragment ignored), so each stored address is rewritten to the canonical form of exactly
 * that URL: same scheme, host, port, path, query and Basic auth — the gateway keeps sending the same
 * request, and monitors now send it too. The health state of a rewritten origin follows it
 * (`origin_health.origin_address`), so nothing restarts from Unknown.
 *
 * Secrets older versions showed: events recorded an unmasked bare address (`health_events.origin_address`)
 * and alerts/history carried its part before the first `/` or `?` (`user:pw@host:port`). Those are
 * masked in place: events get `maskAddress`, and that leaked text in queued deliveries' payloads and in
 * `notification_history.alert_body` is replaced by its masked form.
 *
 * An address that cannot be mapped to the same request (only a hand-edited row can hold one: an
 * unreadable URL, another scheme, a host the model refuses) stops the migration — and the start — with
 * a message naming the pool, the origin and what to do. Nothing is changed then.
 */
interface AddressRow {
  id: string;
  account_id: string;
  name: string;
  settings: string;
}

interface Rewrite {
  poolId: string;
  originName: string;
  from: string;
  to: string;
}

/** The canonical address meaning what the old gateway did with `address`; throws when there is none. */
export function canonicalFromLegacy(address: string): string {
  try {
    return normaliseAddress(address);
  } catch (err) {
    if (!(err instanceof AddressError)) throw err;
  }
  const old = new URL(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(address) ? address : `http://${address}`);
  if (old.protocol !== 'http:' && old.protocol !== 'https:') throw new AddressError(`the scheme must be http or https`);
  const userinfo =
    old.username === '' && old.password === ''
      ? ''
      : `${old.username}${old.password === '' ? '' : `:${old.password}`}@`;
  const candidate = normaliseAddress(`${old.protocol}//${userinfo}${old.host}${old.pathname}${old.search}`);
  const before = originTarget(old.href);
  const after = originTarget(candidate);
  const same =
    before.destination === after.destination &&
    before.host === after.host &&
    before.path === after.path &&
    before.authorization === after.authorization;
  if (!same) throw new AddressError('it cannot be written in the new form with the same meaning');
  return candidate;
}

/** What older versions put in alerts for a bare address: everything before the first `/`, `?` or `#`. */
function legacyShown(address: string): string {
  return address.replace(/[/?#].*$/, '');
}

export function originAddressesMigration(_dialect: Dialect) {
  return {
    async up(untyped: Kysely<unknown>): Promise<void> {
      // biome-ignore lint/suspicious/noExplicitAny: a migration sees the tables as they are at this step.
      const db = untyped as Kysely<any>;
      const pools: AddressRow[] = await db
        .selectFrom('pools')
        .select(['id', 'account_id', 'name', 'settings'])
        .execute();
      const rewrites: Rewrite[] = [];
      const settingsOf = new Map<string, string>();
      const problems: string[] = [];
      for (const pool of pools) {
        let settings: { origins?: unknown };
        try {
          settings = JSON.parse(pool.settings) as { origins?: unknown };
        } catch {
          continue; // an undecodable row is reported by the pool reader, not here
        }
        if (!Array.isArray(settings.origins)) continue;
        let changed = false;
        for (const origin of settings.origins as Array<{ name?: unknown; address?: unknown }>) {
          if (typeof origin?.address !== 'string') continue;
          const name = String(origin.name);
          let to: string;
          try {
            to = canonicalFromLegacy(origin.address);
          } catch (err) {
            const why = err instanceof AddressError ? err.message : 'it is not a valid URL';
            problems.push(
              `pool "${pool.name}" (id ${pool.id}, account ${pool.account_id}), origin "${name}": the stored address cannot be used (${why})`,
            );
            continue;
          }
          if (to === origin.address) continue;
          rewrites.push({ poolId: pool.id, originName: name, from: origin.address, to });
          origin.address = to;
          changed = true;
        }
        if (changed) settingsOf.set(pool.id, JSON.stringify(settings));
      }
      if (problems.length > 0) {
        throw new Error(
          `${problems.join('; ')}. Set a valid address (http(s)://[user:pass@]host[:port][/path][?query] or a bare host[:port]) ` +
            'for these origins, or delete them, with the version that wrote them, then start this version again; nothing was changed',
        );
      }
      for (const [id, settings] of settingsOf) {
        await db.updateTable('pools').set({ settings, version: sql`version + 1` }).where('id', '=', id).execute();
      }
      for (const rewrite of rewrites) {
        await db
          .updateTable('origin_health')
          .set({ origin_address: rewrite.to })
          .where('pool_id', '=', rewrite.poolId)
          .where('origin_name', '=', rewrite.originName)
          .where('origin_address', '=', rewrite.from)
          .execute();
      }
      await scrubLegacyLeaks(db);
    },
  };
}

/** Masks addresses older versions recorded unmasked in events, queued payloads and history. */
// biome-ignore lint/suspicious/noExplicitAny: see above.
async function scrubLegacyLeaks(db: Kysely<any>): Promise<void> {
  const events: Array<{ origin_address: string }> = await db
    .selectFrom('health_events')
    .select('origin_address')
    .distinct()
    .where('origin_address', 'is not', null)
    .where('origin_address', 'not like', '%://%')
    .execute();
  for (const { origin_address: shown } of events) {
    const masked = maskAddress(shown);
    if (masked === shown) continue;
    await db.updateTable('health_events').set({ origin_address: masked }).where('origin_address', '=', shown).execute();
    const leaked = legacyShown(shown);
    const maskedLeak = maskAddress(`http://${leaked}`).slice('http://'.length);
    if (leaked === maskedLeak) continue;
    const replace = (column: string) => sql`replace(${sql.ref(column)}, ${leaked}, ${maskedLeak})`;
    await db
      .updateTable('notification_history')
      .set({ alert_body: replace('alert_body') })
      .where('alert_body', 'like', `%${escapeLike(leaked)}%`)
      .execute();
    await db
      .updateTable('notification_deliveries')
      .set({ payload: replace('payload') })
      .where('payload', 'like', `%${escapeLike(leaked)}%`)
      .execute();
  }
}

/** `text` for a LIKE pattern: `%` and `_` match themselves only approximately, which is enough for a filter. */
function escapeLike(text: string): string {
  return text.replace(/[%_]/g, '_');
}
