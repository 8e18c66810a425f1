/**
 * Shared set-up of the API scenario tests: a whole Switchyard started in-process (test/helpers/app.ts)
 * on the backend the run selects (SQLite, or a fresh PostgreSQL database when
 * SWITCHYARD_TEST_DATABASE_URL is set), plus tokens made straight in its store: read-write and
 * read-only for the routing account, and a read-write token of a second account.
 */
import Cloudflare from 'cloudflare';
import { createAccount } from '../../src/accounts/accounts.js';
import { createToken } from '../../src/accounts/tokens.js';
import { systemClock } from '../../src/clock.js';
import { startApp, type TestApp, type TestAppOptions } from '../helpers/app.js';
import { testStoreLocation } from '../helpers/store.js';

export const OTHER_ACCOUNT = 'b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0';

export interface ApiFixture {
  app: TestApp;
  accountId: string;
  token: string;
  readToken: string;
  otherToken: string;
  /** The official SDK, pointed at this app with the read-write token. */
  sdk: Cloudflare;
  /** Raw request with a token (default: the read-write one); returns status and parsed envelope. */
  call(
    method: string,
    path: string,
    options?: { token?: string | null; body?: unknown },
  ): Promise<{ status: number; body: Envelope }>;
  close(): Promise<void>;
}

export interface Envelope {
  success: boolean;
  errors: { code: number; message: string }[];
  messages: unknown[];
  result: unknown;
  result_info?: { page: number; per_page: number; count: number; total_count: number; total_pages: number };
}

export async function startApiFixture(
  raw: Record<string, unknown> = {},
  options: TestAppOptions = {},
): Promise<ApiFixture> {
  const location = await testStoreLocation();
  const app = await startApp(location.database_url ? { database_url: location.database_url, ...raw } : raw, options);
  const accountId = app.config.account_id;
  const db = app.store.db;
  const token = (await createToken(db, systemClock, { accountId, readOnly: false })).token;
  const readToken = (await createToken(db, systemClock, { accountId, readOnly: true })).token;
  await createAccount(db, systemClock, { id: OTHER_ACCOUNT, name: 'other' });
  const otherToken = (await createToken(db, systemClock, { accountId: OTHER_ACCOUNT, readOnly: false })).token;
  const sdk = new Cloudflare({ apiToken: token, baseURL: app.apiUrl, maxRetries: 0 });
  return {
    app,
    accountId,
    token,
    readToken,
    otherToken,
    sdk,
    async call(method, path, options = {}) {
      const headers: Record<string, string> = {};
      const useToken = options.token === undefined ? token : options.token;
      if (useToken !== null) headers.authorization = `Bearer ${useToken}`;
      let body: string | undefined;
      if (options.body !== undefined) {
        headers['content-type'] = 'application/json';
        body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      }
      const res = await fetch(`${app.apiUrl}${path}`, { method, headers, body });
      const type = res.headers.get('content-type') ?? '';
      if (!type.startsWith('application/json')) throw new Error(`${method} ${path}: content-type ${type}`);
      return { status: res.status, body: (await res.json()) as Envelope };
    },
    async close() {
      await app.close();
      location.cleanup();
    },
  };
}
