/**
 * Where a pool row's secrets are (store/sealed-settings.ts): each origin's `address` and `ws_address`
 * when they hold a secret, and the values of its secret headers (the kinds of store/sealed-fields.ts).
 * They are sealed together, one value per row (`settings.sealed`, context `pools/<pool id>`): JSON
 * `{"origins": [parts of origin 0 or null, …]}`, by position. The origins in `settings` keep the clear
 * copy — what the API shows — so the row still reads well to a person and holds no secret's bytes.
 */
import type { Db } from '../store/database.js';
import { joinSecrets, type SecretFields, splitSecrets } from '../store/sealed-fields.js';
import {
  isJsonObject,
  type Json,
  openSettings,
  resealSettings,
  type SettingsSecrets,
  sealSettings,
  settingsContext,
} from '../store/sealed-settings.js';
import { SealedValueError } from '../store/secret-box.js';
import type { Opener, Sealer } from '../store/store-secrets.js';

const ORIGIN_SECRETS: SecretFields = { address: 'address', ws_address: 'address', header: 'headers' };

const POOL_SECRETS: SettingsSecrets = {
  split(settings) {
    const origins = Array.isArray(settings.origins) ? (settings.origins as unknown[]) : [];
    const split = origins.map((origin) => (isJsonObject(origin) ? splitSecrets(origin, ORIGIN_SECRETS) : undefined));
    if (split.every((part) => part?.secrets === undefined)) return { clear: settings, parts: undefined };
    return {
      clear: { ...settings, origins: origins.map((origin, i) => split[i]?.clear ?? origin) },
      parts: { origins: split.map((part) => part?.secrets ?? null) },
    };
  },
  join(clear, parts) {
    const secrets = isJsonObject(parts) ? parts.origins : undefined;
    const origins = clear.origins;
    if (!Array.isArray(secrets) || !Array.isArray(origins) || secrets.length !== origins.length) {
      throw new SealedValueError('the sealed origin secrets do not match the origins');
    }
    return {
      ...clear,
      origins: origins.map((origin: unknown, i) => {
        const part: unknown = secrets[i];
        return isJsonObject(part) && isJsonObject(origin) ? joinSecrets(origin, part, ORIGIN_SECRETS) : origin;
      }),
    };
  },
};

const contextOf = (poolId: string) => settingsContext('pools', poolId);

/** The settings of pool `poolId` as stored. */
export function sealPoolSettings<T extends Json>(settings: T, sealer: Sealer, poolId: string): T {
  return sealSettings(settings, POOL_SECRETS, sealer, contextOf(poolId));
}

/** Stored settings (parsed JSON) of pool `poolId` with its secrets opened; throws SealedValueError. */
export function openPoolSettings(json: unknown, opener: Opener, poolId: string): unknown {
  return openSettings(json, POOL_SECRETS, opener, contextOf(poolId));
}

/** Seals every pool row holding a secret in the clear or under another key than `sealer`'s. */
export function resealPools(db: Db, opener: Opener, sealer: Sealer): Promise<number> {
  return resealSettings(db, 'pools', POOL_SECRETS, opener, sealer);
}
