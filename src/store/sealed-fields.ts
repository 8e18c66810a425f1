/**
 * Which parts of a stored object are secret, and how a row keeps them: one rule for every table that
 * holds secrets (pools' origins, monitors, webhook destinations), so "what the API masks" and "what the
 * store seals" are the same thing.
 *
 * A field is one of three kinds:
 * - `address`: an origin or webhook URL; secret when `maskAddress` hides part of it (userinfo, query
 *   values, key-like path segments — model/origin-address.ts). The clear copy is the masked address.
 * - `headers`: a header map; its secret-looking headers (model/header-secrets.ts) are secret. The clear
 *   copy shows each of their values as `***`.
 * - `whole`: the value is a secret in full (a webhook secret). The clear copy is null.
 *
 * `splitSecrets` takes an object as the code uses it and gives the clear copy to store plus the secret
 * parts to seal (undefined when there are none, so an object without secrets is stored as it is);
 * `joinSecrets` puts opened parts back. Values of an unexpected type are left alone (the row's reader
 * reports such a row).
 */
import { type HeaderValues, maskHeaders, secretHeaders } from '../model/header-secrets.js';
import { holdsSecrets, maskAddress } from '../model/origin-address.js';

export type SecretKind = 'address' | 'headers' | 'whole';
export type SecretFields = Readonly<Record<string, SecretKind>>;

type JsonMembers = Readonly<Record<string, unknown>>;

function isHeaderValues(value: unknown): value is HeaderValues {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.values(value).every((values) => Array.isArray(values) && values.every((v) => typeof v === 'string'))
  );
}

/** The secret part of one field, or undefined when it holds none. */
function secretOf(kind: SecretKind, value: unknown): unknown {
  if (kind === 'address') return typeof value === 'string' && holdsSecrets(value) ? value : undefined;
  if (kind === 'headers') return isHeaderValues(value) ? secretHeaders(value) : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function clearOf(kind: SecretKind, value: unknown): unknown {
  if (kind === 'address') return maskAddress(value as string);
  if (kind === 'headers') return maskHeaders(value as HeaderValues);
  return null;
}

/** The clear copy of `record` and its secret parts (see the header). */
export function splitSecrets<T extends JsonMembers>(
  record: T,
  fields: SecretFields,
): { clear: T; secrets: Record<string, unknown> | undefined } {
  let secrets: Record<string, unknown> | undefined;
  const clear: Record<string, unknown> = { ...record };
  for (const [field, kind] of Object.entries(fields)) {
    const secret = secretOf(kind, record[field]);
    if (secret === undefined) continue;
    secrets ??= {};
    secrets[field] = secret;
    clear[field] = clearOf(kind, record[field]);
  }
  return { clear: clear as T, secrets };
}

/** `clear` with the opened secret parts put back. */
export function joinSecrets<T extends JsonMembers>(clear: T, secrets: JsonMembers, fields: SecretFields): T {
  const joined: Record<string, unknown> = { ...clear };
  for (const [field, kind] of Object.entries(fields)) {
    const secret = secrets[field];
    if (secret === undefined) continue;
    // A header map keeps its other headers in the clear; the secret ones replace their `***` values.
    joined[field] = kind === 'headers' ? { ...(clear[field] as HeaderValues), ...(secret as HeaderValues) } : secret;
  }
  return joined as T;
}
