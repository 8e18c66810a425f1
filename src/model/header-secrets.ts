/**
 * Extra request headers of origins and monitors may carry credentials (a provider's `X-Api-Key`, an
 * `Authorization` for a protected node). Their values are never shown: the API returns every value of a
 * secret-looking header as `***` — Authorization, Proxy-Authorization, Cookie, and any name containing
 * auth, key, token, secret, passw, credential, session or signature. Other headers (Host, …) are shown.
 *
 * So that a client can GET an object, change something and send it back, a value sent as `***` means
 * "keep the stored value at this position of this header" (names compared case-insensitively); when
 * there is no such stored value the write is refused (a masked value cannot be written). For an origin,
 * a kept value is bound to the origin's destination: the pools API refuses `***` when the address's
 * scheme, host or port changes (api/schemas/pools.ts).
 */
import { MASK } from './origin-address.js';

/** The one mask (origin-address.ts): what a secret is shown as, and what a client sends back to keep it. */
export const MASKED_VALUE = MASK;
const SECRET_NAME = /auth|cookie|key|token|secret|passw|credential|session|signature/i;

export type HeaderValues = Record<string, string[]>;

export function isSecretHeader(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** The secret headers of a map (what `maskHeaders` hides, and what the store seals), or undefined when none. */
export function secretHeaders(headers: HeaderValues): HeaderValues | undefined {
  const secret = Object.entries(headers).filter(([name, values]) => isSecretHeader(name) && values.length > 0);
  return secret.length === 0 ? undefined : Object.fromEntries(secret);
}

export function maskHeaders(headers: HeaderValues): HeaderValues {
  return Object.fromEntries(
    Object.entries(headers).map(([name, values]) => [
      name,
      isSecretHeader(name) ? values.map(() => MASKED_VALUE) : values,
    ]),
  );
}

/**
 * `sent` with each `***` replaced by the stored value it stands for, and `kept`, the names of the headers
 * that took a stored value (the caller binds those to the destination); `{ missing: name }` names the
 * first header whose `***` has no stored value behind it.
 */
export function unmaskHeaders(
  sent: HeaderValues,
  stored: HeaderValues | undefined,
): { headers: HeaderValues; kept: string[] } | { missing: string } {
  const storedByName = new Map(Object.entries(stored ?? {}).map(([name, values]) => [name.toLowerCase(), values]));
  const headers: HeaderValues = {};
  const kept: string[] = [];
  for (const [name, values] of Object.entries(sent)) {
    const before = storedByName.get(name.toLowerCase());
    const resolved: string[] = [];
    for (const [i, value] of values.entries()) {
      if (value !== MASKED_VALUE) {
        resolved.push(value);
        continue;
      }
      const storedValue = before?.[i];
      if (storedValue === undefined || !isSecretHeader(name)) return { missing: name };
      resolved.push(storedValue);
      if (!kept.includes(name)) kept.push(name);
    }
    headers[name] = resolved;
  }
  return { headers, kept };
}
