/**
 * The console's client of the management API (`/client/v4`, same origin). Every call sends the token as
 * `Authorization: Bearer …`; a 401 raises `SessionEnded` (the app returns to sign-in with a message),
 * any other failure an `ApiError` carrying the envelope's first message.
 */
export const API = '/client/v4';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The token was refused (401): sign in again. */
export class SessionEnded extends ApiError {}

interface ApiEnvelope<T> {
  success: boolean;
  errors: Array<{ code: number; message: string }>;
  result: T;
}

export class Client {
  constructor(
    readonly token: string,
    readonly accountId: string = '',
  ) {}

  withAccount(accountId: string): Client {
    return new Client(this.token, accountId);
  }

  /** Path with `{account}` replaced by the signed-in account's id. */
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = API + path.replace('{account}', this.accountId);
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        body: body === undefined ? null : JSON.stringify(body),
        cache: 'no-store',
      });
    } catch {
      throw new ApiError(0, 'The Switchyard API cannot be reached; is `switchyard serve` running?');
    }
    let envelope: ApiEnvelope<T> | undefined;
    try {
      envelope = (await res.json()) as ApiEnvelope<T>;
    } catch {
      envelope = undefined;
    }
    const message = envelope?.errors?.[0]?.message ?? `HTTP ${res.status}`;
    if (res.status === 401) throw new SessionEnded(401, message);
    if (!res.ok || envelope === undefined || envelope.success !== true) throw new ApiError(res.status, message);
    return envelope.result;
  }

  get<T>(path: string): Promise<T> {
    return this.call<T>('GET', path);
  }
}
