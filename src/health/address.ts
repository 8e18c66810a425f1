import { maskAddress } from '../balancing/origin-address.js';

/**
 * An origin address fit to show (health endpoint keys, events, alerts, logs): the same masking the pools
 * API applies (credentials, query values and key-like path segments become `***`), so a health report's
 * keys match the `address` of the pool object's origins. A bare `host[:port]` is shown as is.
 */
export function displayAddress(address: string): string {
  return maskAddress(address);
}
