/**
 * Where the management API lives: its path prefix, and its URL as `api.listen`/`api.tls` configure it.
 * Kept apart from api/api-server.ts so the links in alert emails and the migration tool's default `--api-url`
 * can name the API without loading the server.
 */
import type { Config } from './schema.js';

export const API_BASE_PATH = '/client/v4';

/** `http(s)://{listen}/client/v4`; `listen` as given (callers map a wildcard address first if they need to). */
export function apiBaseUrl(api: Pick<Config['api'], 'listen' | 'tls'>): string {
  return `${api.tls === undefined ? 'http' : 'https'}://${api.listen}${API_BASE_PATH}`;
}
