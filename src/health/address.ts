import { redactUrl } from '../log.js';

/**
 * An origin address fit to show (health endpoint keys, events, alerts, logs): URLs lose credentials,
 * query and key-like path segments (providers put API keys there); a bare `host[:port]` is shown as is.
 */
export function displayAddress(address: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(address) ? redactUrl(address) : address;
}
